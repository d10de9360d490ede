package doris_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// repeatReader yields n bytes of a repeated 1 KiB JSON line.
type repeatReader struct {
	line []byte
	off  int
	n    int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	w := 0
	for w < len(p) {
		c := copy(p[w:], r.line[r.off:])
		w += c
		r.off = (r.off + c) % len(r.line)
	}
	r.n -= int64(w)
	return w, nil
}

// BenchmarkStreamLoadBody is one Stream Load (FE 307, then the body
// streamed chunked to the BE) of 16 MiB of JSON lines into the emulator
// in counting mode: the client side cost per body byte (MB/s) and the
// allocations per load.
func BenchmarkStreamLoadBody(b *testing.B) {
	srv, err := doristest.NewServer(doristest.SeedDatabases("bench"), doristest.WithoutAdmin())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	if err := srv.CreateTable("bench", "CREATE TABLE t (id BIGINT, note VARCHAR(2048)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		b.Fatal(err)
	}
	if err := srv.SetCounting("bench", "t", true); err != nil {
		b.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	line := []byte(`{"id":1,"note":"`)
	for len(line) < 1023 {
		line = append(line, 'x')
	}
	line = append(line, "\"}\n"...)
	const size = 16 << 20
	b.ReportAllocs()
	b.SetBytes(size)
	i := 0
	for b.Loop() {
		i++
		req := doris.LoadRequest{DB: "bench", Table: "t", Label: fmt.Sprintf("bench-%d", i), Format: "json", ReadJSONByLine: true}
		if _, err := client.StreamLoad(context.Background(), req, &repeatReader{line: line, n: size}); err != nil {
			b.Fatal(err)
		}
	}
}
