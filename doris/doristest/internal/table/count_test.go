package table

import (
	"fmt"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Counting mode: rows and bytes are counted, nothing is stored.
func TestCountingMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    []string
		body string
		rows int64
	}{
		{"csv", nil, "1\ta\n\n2\tb\n3\tc", 3},
		{"csv skip", []string{"format", "csv_with_names"}, "k\tv\n1\ta\n", 1},
		{"json lines", []string{"format", "json"}, `{"k":1}` + "\n" + `{"k":2}` + "\n", 2},
		{"json array", []string{"format", "json", "strip_outer_array", "true"}, `[{"k":1},{"k":2},{"k":3}]`, 3},
		{"json one doc", []string{"format", "json", "read_json_by_line", "false"}, `{"k":1}`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := dupKV(t)
			tb.SetCounting(true)
			b := commit(t, tb, hdr(c.h...), c.body)
			commit(t, tb, hdr(c.h...), c.body)
			rows, bytes := tb.Counts()
			if rows != 2*c.rows || bytes != int64(2*len(c.body)) || b.TotalRows != c.rows || b.LoadedRows() != c.rows {
				t.Fatalf("counts rows %d bytes %d (batch %d), want %d / %d", rows, bytes, b.TotalRows, 2*c.rows, 2*len(c.body))
			}
			if len(tb.Rows()) != 0 || tb.Version() != 0 {
				t.Fatal("counting mode stored rows")
			}
		})
	}
}

// genReader streams n CSV rows without materialising the body.
type genReader struct {
	n, i int
	buf  []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		g.buf = fmt.Appendf(g.buf[:0], "%d\tname-%d\t%d.%02d\n", g.i%5000, g.i, g.i, g.i%100)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// A 100k-row load streams through Prepare and lands in a UNIQUE table
// (memory sanity; no timing assertions).
func TestLargeLoad(t *testing.T) {
	t.Parallel()
	const n = 100_000
	tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(32)"), col("d", "DECIMAL(12,2)"))
	spec, _ := ParseLoadSpec(hdr())
	b, err := tb.Prepare(spec, &genReader{n: n})
	if err != nil {
		t.Fatal(err)
	}
	counts(t, b, n, 0, 0)
	tb.Apply(b)
	rows := tb.Rows()
	if len(rows) != 5000 {
		t.Fatalf("%d keys, want 5000", len(rows))
	}
	// the last row per key wins: key 0 last written by i = n-5000
	if rows[0][1] != fmt.Sprintf("name-%d", n-5000) {
		t.Fatalf("key 0 = %v", rows[0])
	}
	// counting mode over the same stream
	tb.SetCounting(true)
	b, err = tb.Prepare(spec, &genReader{n: n})
	if err != nil || b.TotalRows != n {
		t.Fatalf("counting: %v %d", err, b.TotalRows)
	}
}
