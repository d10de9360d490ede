//go:build unix

package loader_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// BenchmarkLoaderTables loads the same bytes (32 MiB of 1 KiB JSON rows,
// 8 checkpoints) into 1, 10 and 50 tables (rows round-robin, so every
// checkpoint touches every table), through the emulator in counting mode.
// Per op (one whole load; run with -benchtime=1x): MB/s, CPU-s per GB of
// rows (user+system of the whole process: loader, HTTP and emulator) and
// labels per checkpoint (txns per decision).
func BenchmarkLoaderTables(b *testing.B) {
	for _, tables := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) { benchTables(b, tables) })
	}
}

func benchTables(b *testing.B, tables int) {
	srv, err := doristest.NewServer(doristest.SeedDatabases("bench"), doristest.WithoutAdmin())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	names := make([]string, tables)
	for k := range names {
		names[k] = fmt.Sprintf("t%d", k)
		ddl := fmt.Sprintf("CREATE TABLE %s (id BIGINT, note VARCHAR(2048)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", names[k])
		if err := srv.CreateTable("bench", ddl); err != nil {
			b.Fatal(err)
		}
		if err := srv.SetCounting("bench", names[k], true); err != nil {
			b.Fatal(err)
		}
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	row := []byte(`{"id":1,"note":"`)
	for len(row) < 1022 {
		row = append(row, 'x')
	}
	row = append(row, `"}`...)
	const rows, perCheckpoint = 32 << 10, 4 << 10
	ctx := context.Background()
	var wall, cpu time.Duration
	var labels, decisions int
	for b.Loop() {
		owner := checkpoint.Owner{Job: "bench", DB: "bench", Table: names[0], Writer: "0"}
		store := checkpoint.NewMemory(owner)
		ld, err := loader.New(client, loader.Config{Job: "bench", DB: "bench", Table: names[0], Store: store,
			Knobs: &loader.TestingKnobs{AfterPrecommit: func(uint64, *doris.LoadResult) { labels++ }}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ld.Recover(ctx); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime(b)
		for i := range rows {
			if err := ld.WriteTo(ctx, names[i%tables], row); err != nil {
				b.Fatal(err)
			}
			if (i+1)%perCheckpoint == 0 {
				if err := ld.Checkpoint(ctx, []byte(fmt.Sprint(i+1))); err != nil {
					b.Fatal(err)
				}
				decisions++
			}
		}
		if err := ld.Close(ctx); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += cpuTime(b) - cpu0
	}
	b.StopTimer()
	var loaded int64
	for _, n := range names {
		r, _, err := srv.Counts("bench", n)
		if err != nil {
			b.Fatal(err)
		}
		loaded += r
	}
	if want := int64(rows * b.N); loaded != want {
		b.Fatalf("emulator counted %d rows, wrote %d", loaded, want)
	}
	gb := float64(b.N) * float64(rows*(len(row)+1)) / 1e9
	b.ReportMetric(gb*1e3/wall.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/gb, "CPU-s/GB")
	b.ReportMetric(float64(labels)/float64(decisions), "labels/checkpoint")
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
