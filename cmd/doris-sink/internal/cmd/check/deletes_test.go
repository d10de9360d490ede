package check

import (
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// check fails records.delete.* on a Duplicate table, naming the model, and
// says what deletes on a Unique one.
func TestCheckDeletes(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Doris: config.Doris{Database: "demo", Table: "t"},
		Records: config.Records{Format: config.RecordsJSON, Delete: config.Delete{Field: "op", Value: "d", Tombstones: true}}}
	for _, tc := range []struct {
		ddl    string
		status string
		want   string
	}{
		{"CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", Fail, "demo.t is a DUPLICATE table"},
		{"CREATE TABLE t (id BIGINT, v BIGINT SUM) AGGREGATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", Fail, "demo.t is a AGGREGATE table"},
		{"CREATE TABLE t (id BIGINT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", OK, "records with op = d delete their key; tombstones"},
	} {
		tb, err := schema.ParseCreateTable(tc.ddl)
		if err != nil {
			t.Fatal(err)
		}
		var r Report
		checkDeletes(&r, cfg, tb)
		if len(r.Lines) != 1 || r.Lines[0].Status != tc.status || r.Lines[0].Check != "deletes" || !strings.Contains(r.Lines[0].Detail, tc.want) {
			t.Errorf("%s: %+v, want %v containing %q", tc.ddl, r.Lines, tc.status, tc.want)
		}
	}
	var r Report
	checkDeletes(&r, &config.Config{}, nil)
	if len(r.Lines) != 0 {
		t.Errorf("no deletes configured: %+v", r.Lines)
	}
	// enable.delete (hidden_columns) on a Duplicate table fails too.
	dup, err := schema.ParseCreateTable("CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	if err != nil {
		t.Fatal(err)
	}
	r = Report{}
	checkDeletes(&r, &config.Config{Doris: config.Doris{Database: "demo", Table: "t", Properties: map[string]string{"hidden_columns": "__DORIS_DELETE_SIGN__"}}}, dup)
	if r.Failed != 1 || !strings.Contains(r.Lines[0].Detail, "DUPLICATE table") {
		t.Errorf("hidden_columns on duplicate: %+v", r.Lines)
	}
}
