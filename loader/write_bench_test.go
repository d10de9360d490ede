package loader_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// BenchmarkLoaderWrite1K is the Loader's Write path (buffer append, body
// flush through the pipe to the Stream Load goroutine, HTTP chunked
// transfer to the emulator in counting mode) for 1 KiB rows; a checkpoint
// is decided every 64 MiB. Report: ns/op and allocs/op per row.
func BenchmarkLoaderWrite1K(b *testing.B) {
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
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	owner := checkpoint.Owner{Job: "bench", DB: "bench", Table: "t", Writer: "0"}
	ld, err := loader.New(client, loader.Config{Job: "bench", DB: "bench", Table: "t", Store: checkpoint.NewMemory(owner)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ld.Recover(ctx); err != nil {
		b.Fatal(err)
	}
	row := []byte(`{"id":1,"note":"`)
	for len(row) < 1022 {
		row = append(row, 'x')
	}
	row = append(row, `"}`...)
	const perCheckpoint = 64 << 10 // rows: 64 MiB
	b.ReportAllocs()
	b.SetBytes(int64(len(row) + 1))
	n := 0
	for b.Loop() {
		if err := ld.Write(ctx, row); err != nil {
			b.Fatal(err)
		}
		if n++; n%perCheckpoint == 0 {
			if err := ld.Checkpoint(ctx, []byte(fmt.Sprint(n))); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := ld.Checkpoint(ctx, []byte(fmt.Sprint(n))); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := ld.Close(ctx); err != nil {
		b.Fatal(err)
	}
	rows, _, err := srv.Counts("bench", "t")
	if err != nil || rows != int64(n) {
		b.Fatalf("emulator counted %d rows (err %v), wrote %d", rows, err, n)
	}
}
