package fileload

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

const ddl = "CREATE TABLE t (k BIGINT, v VARCHAR(64)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"

// newDoris starts an emulator with demo.t (ddl) and a client.
func newDoris(t *testing.T, table string, opts ...doristest.Opt) (*doristest.Server, *doris.Client) {
	t.Helper()
	s, err := doristest.NewServer(append([]doristest.Opt{doristest.SeedDatabases("demo")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.CreateTable("demo", table); err != nil {
		t.Fatal(err)
	}
	c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, MySQL: s.MySQLAddr(), User: "root", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// csvFile writes rows k = from..to-1 ("k\tv-k") to dir/name (gzip when
// the name ends in .gz); finalNewline false leaves the last line open.
func csvFile(t *testing.T, dir, name string, from, to int, finalNewline bool) string {
	t.Helper()
	var b bytes.Buffer
	for k := from; k < to; k++ {
		fmt.Fprintf(&b, "%d\tv-%d", k, k)
		if k < to-1 || finalNewline {
			b.WriteByte('\n')
		}
	}
	return writeFile(t, dir, name, b.Bytes())
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if filepath.Ext(name) == ".gz" {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(data)
		w.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// opts returns Options loading files into demo.t with fast retries.
func opts(c Doris, store string, files ...string) Options {
	return Options{Client: c, DB: "demo", Table: "t", Files: files, StoreDir: store, Workers: 3, ChunkBytes: 64,
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 10 * time.Second}}
}

// keys returns the table's k values, sorted.
func keys(t *testing.T, s *doristest.Server) []int64 {
	t.Helper()
	rows, err := s.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	var ks []int64
	for _, r := range rows {
		ks = append(ks, toInt(t, r[0]))
	}
	slices.Sort(ks)
	return ks
}

func toInt(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float64:
		return int64(x)
	}
	t.Fatalf("value %v (%T) is not an integer", v, v)
	return 0
}

// wantExactlyOnce fails unless the table holds keys 0..n-1 once each.
func wantExactlyOnce(t *testing.T, s *doristest.Server, n int) {
	t.Helper()
	ks := keys(t, s)
	if len(ks) != n {
		t.Fatalf("table has %d rows, want %d exactly once", len(ks), n)
	}
	for i, k := range ks {
		if k != int64(i) {
			t.Fatalf("row %d has key %d: a row is missing or duplicated", i, k)
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}
