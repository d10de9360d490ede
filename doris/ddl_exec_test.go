package doris_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// ExecDDL runs CREATE TABLE IF NOT EXISTS and ALTER TABLE over MySQL;
// Doris refusals keep their sentinel and the statement's head, never the
// password.
func TestExecDDL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := newEmulated(t)
	tbl := &schema.Table{Database: emuDB, Name: "cust", Keys: schema.UniqueKeys, KeyColumns: []string{"id"},
		DistributedBy: []string{"id"}, Buckets: 1, Properties: map[string]string{schema.PropMergeOnWrite: "true"},
		Columns: []schema.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR(10)", Nullable: true}}}
	for range 2 { // idempotent
		if err := c.ExecDDL(ctx, tbl.CreateTableIfNotExistsSQL()); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	add := []schema.Column{{Name: "city", Type: "STRING", Nullable: true}}
	widen := []schema.Column{{Name: "name", Type: "VARCHAR(30)", Nullable: true}}
	if err := c.ExecDDL(ctx, schema.AlterColumnsSQL(emuDB, "cust", add, widen)); err != nil {
		t.Fatalf("alter: %v", err)
	}
	got, err := s.Schema(emuDB, "cust")
	if err != nil {
		t.Fatal(err)
	}
	if col, _, ok := got.Column("city"); !ok || col.Type != "STRING" {
		t.Fatalf("city: %+v", got.Columns)
	}
	if col, _, _ := got.Column("name"); col.Type != "VARCHAR(30)" {
		t.Fatalf("name: %+v", col)
	}
	err = c.ExecDDL(ctx, schema.AlterColumnsSQL(emuDB, "missing", add, nil))
	if !errors.Is(err, doris.ErrNotFound) || !strings.Contains(err.Error(), "ALTER TABLE `demo`.`missing`") || strings.Contains(err.Error(), "pw-emu") {
		t.Fatalf("alter of a missing table: %v, want ErrNotFound naming the statement", err)
	}
}
