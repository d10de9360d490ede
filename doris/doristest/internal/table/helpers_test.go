package table

import (
	"net/http"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func strp(s string) *string { return &s }

// col builds a column; spec is "TYPE [NOT NULL] [SUM|MAX|…] [DEFAULT=x]".
func col(name, spec string) schema.Column {
	c := schema.Column{Name: name, Nullable: true}
	parts := strings.Fields(spec)
	c.Type = parts[0]
	for i := 1; i < len(parts); i++ {
		switch p := parts[i]; {
		case p == "NOT":
			c.Nullable = false
			i++ // NULL
		case strings.HasPrefix(p, "DEFAULT="):
			c.Default = strp(strings.TrimPrefix(p, "DEFAULT="))
		default:
			c.Agg = schema.AggType(p)
		}
	}
	return c
}

func newTable(t *testing.T, keys schema.KeysType, keyCols []string, props map[string]string, cols ...schema.Column) *Table {
	t.Helper()
	tb, err := New(&schema.Table{Name: "t", Keys: keys, KeyColumns: keyCols, Columns: cols, Properties: props})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tb
}

// hdr builds headers from name, value pairs.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// load parses and requires success.
func load(t *testing.T, tb *Table, h http.Header, body string) *Batch {
	t.Helper()
	b, err := tryLoad(tb, h, body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return b
}

func tryLoad(tb *Table, h http.Header, body string) (*Batch, error) {
	spec, err := ParseLoadSpec(h)
	if err != nil {
		return nil, err
	}
	return tb.Prepare(spec, strings.NewReader(body))
}

// commit loads and applies.
func commit(t *testing.T, tb *Table, h http.Header, body string) *Batch {
	t.Helper()
	b := load(t, tb, h, body)
	tb.Apply(b)
	return b
}

func counts(t *testing.T, b *Batch, total, filtered, unselected int64) {
	t.Helper()
	if b.TotalRows != total || b.FilteredRows != filtered || b.UnselectedRows != unselected {
		t.Fatalf("counters total/filtered/unselected = %d/%d/%d, want %d/%d/%d (errors %q)",
			b.TotalRows, b.FilteredRows, b.UnselectedRows, total, filtered, unselected, b.ErrorLines)
	}
}
