package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

type tableReader struct {
	ddl   string
	err   error
	calls int
}

func (r *tableReader) ShowCreateTable(context.Context, string, string) (*schema.Table, error) {
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	return schema.ParseCreateTable(r.ddl)
}

// records.delete.* runs only into a Unique Key table (a Duplicate or
// Aggregate table has no __DORIS_DELETE_SIGN__, docs/doris-facts.md §7); the
// refusal names the table and its model.
func TestCheckDeleteTable(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Doris: config.Doris{Database: "demo", Table: "kv"},
		Records: config.Records{Format: config.RecordsJSON, Delete: config.Delete{Field: "op", Value: "d"}}}
	for _, tc := range []struct{ ddl, want string }{
		{"CREATE TABLE kv (id BIGINT, v VARCHAR(8)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", "demo.kv is a DUPLICATE table"},
		{"CREATE TABLE kv (id BIGINT, v BIGINT SUM) AGGREGATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", "demo.kv is a AGGREGATE table"},
	} {
		err := CheckDeleteTable(context.Background(), &tableReader{ddl: tc.ddl}, cfg)
		if !errors.Is(err, ErrDeletesNeedUnique) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "records.delete") {
			t.Errorf("%s: %v, want ErrDeletesNeedUnique naming %q", tc.ddl, err, tc.want)
		}
	}
	uniq := "CREATE TABLE kv (id BIGINT, v VARCHAR(8)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	if err := CheckDeleteTable(context.Background(), &tableReader{ddl: uniq}, cfg); err != nil {
		t.Errorf("unique: %v", err)
	}
	read := errors.New("mysql down")
	if err := CheckDeleteTable(context.Background(), &tableReader{err: read}, cfg); !errors.Is(err, read) {
		t.Errorf("unreadable: %v, want the read error", err)
	}
	off := &tableReader{err: read}
	cfg.Records.Delete = config.Delete{}
	if err := CheckDeleteTable(context.Background(), off, cfg); err != nil || off.calls != 0 {
		t.Errorf("no deletes: %v after %d reads, want nil without reading", err, off.calls)
	}
	// The other ways to load the delete sign are refused the same way.
	dup := &tableReader{ddl: "CREATE TABLE kv (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"}
	for _, c := range []*config.Config{
		{Doris: cfg.Doris, Records: config.Records{Format: config.RecordsDebezium}},
		{Doris: config.Doris{Database: "demo", Table: "kv", Properties: map[string]string{"hidden_columns": "x, __DORIS_DELETE_SIGN__"}},
			Records: config.Records{Format: config.RecordsJSON}},
	} {
		if err := CheckDeleteTable(context.Background(), dup, c); !errors.Is(err, ErrDeletesNeedUnique) {
			t.Errorf("%+v: %v, want ErrDeletesNeedUnique", c.Records, err)
		}
	}
}

// The delete keys reach the connector.
func TestConnectorConfigCarriesDeletes(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Records: config.Records{Format: config.RecordsJSON, Delete: config.Delete{Field: "op", Value: "d", Tombstones: true}}}
	kc, err := connectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kc.Delete.Field != "op" || kc.Delete.Value != "d" || !kc.Delete.Tombstones {
		t.Errorf("Delete = %+v", kc.Delete)
	}
}

// run refuses records.delete.* on the Duplicate Key table of the run
// tests before reading anything.
func TestRunRefusesDeletesOnDuplicateTable(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	e.produce(1)
	_, _, done := e.start("records: { delete: { tombstones: true } }\n")
	err := result(t, done)
	if !errors.Is(err, ErrDeletesNeedUnique) || !strings.Contains(err.Error(), "demo.t is a DUPLICATE table") {
		t.Fatalf("Run: %v, want a refusal naming demo.t and its model", err)
	}
}

// run loads records.delete.* end to end: the Build adds hidden_columns, so
// the field-marked delete and the tombstone remove their keys.
func TestRunLoadsDeletes(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	if err := e.srv.CreateTable("demo", "CREATE TABLE kv (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	e.table = "kv"
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rs := []*kgo.Record{
		{Value: []byte(`{"id":1,"v":"a"}`)}, {Value: []byte(`{"id":2,"v":"b"}`)}, {Value: []byte(`{"id":3,"v":"c"}`)},
		{Value: []byte(`{"id":1,"op":"d"}`)}, {Key: []byte(`{"id":2}`)},
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sigs, tap, done := e.start("records: { delete: { field: op, value: d, tombstones: true } }\ndelivery: { checkpoint_max_rows: 5 }\n")
	tap.wait(t, "checkpoint decided")
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows("demo", "kv")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != "[[3 c]]" {
		t.Fatalf("rows %s, want [[3 c]]", got)
	}
}

// run with tables.<pattern>.delete: the routed table "ud" deletes by its
// own field, the other routed table loads the same record as a row (Build
// wires WithTableDeletes and the table's hidden_columns).
func TestRunTableDeletes(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	for _, tbl := range []string{"ud", "uk"} {
		if err := e.srv.CreateTable("demo", "CREATE TABLE "+tbl+" (id BIGINT, op VARCHAR(8)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "+
			`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, tbl := range []string{"ud", "uk"} {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":1,"op":"add","t":%q}`, tbl)},
			&kgo.Record{Value: fmt.Appendf(nil, `{"id":2,"op":"add","t":%q}`, tbl)},
			&kgo.Record{Value: fmt.Appendf(nil, `{"id":1,"op":"del","t":%q}`, tbl)})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sigs, tap, done := e.start("routing: { table_field: t }\ntables: { ud: { delete: { field: op, value: del } } }\ndelivery: { checkpoint_max_rows: 6 }\n")
	tap.waitFor(t, "the checkpoint of the 6 records", func(m map[string]any) bool {
		return m["msg"] == "checkpoint decided" && strings.Contains(fmt.Sprint(m["end"]), "6")
	})
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for table, want := range map[string]string{"ud": "[[2 add]]", "uk": "[[1 del] [2 add]]"} {
		rows, err := e.srv.Rows("demo", table)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != want {
			t.Errorf("%s rows %s, want %s", table, got, want)
		}
	}
}
