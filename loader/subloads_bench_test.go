//go:build unix

package loader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// benchLoadCeiling is the emulator's per-load ingestion ceiling of
// BenchmarkLoaderSubLoads (doristest.WithLoadThroughput): a BE model whose
// one Stream Load is slower than the sink, as a real BE's ~100 MB/s is
// slower than the sink's one core reading 1 KiB JSON (issue 15), scaled
// down so that the 2-core test machine is not the bound at K = 1.
const benchLoadCeiling = 16 << 20

// BenchmarkLoaderSubLoads loads 32 MiB of 1 KiB JSON rows (8 checkpoints,
// keys 0..15 as sixteen source partitions) into one table through K = 1,
// 2, 4, 8 sub-loads, against the emulator in counting mode with 4 BEs and
// a per-load ceiling of 16 MiB/s. Throughput rises with K until the
// sink's (and emulator's) CPU is the bound. Per op (run with
// -benchtime=1x): MB/s, CPU-s per GB (whole process) and labels per
// checkpoint (= touched sub-loads).
//
// The ceiling=none runs take the ceiling away: what the sink and the
// emulator reach on the machine's cores, the bound of the curve.
func BenchmarkLoaderSubLoads(b *testing.B) {
	for _, k := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) { benchSubLoads(b, k, benchLoadCeiling) })
	}
	for _, k := range []int{1, 8} {
		b.Run(fmt.Sprintf("ceiling=none/K=%d", k), func(b *testing.B) { benchSubLoads(b, k, 0) })
	}
}

func benchSubLoads(b *testing.B, k int, ceiling int64) {
	srv, err := doristest.NewServer(doristest.SeedDatabases("bench"), doristest.WithoutAdmin(),
		doristest.WithBackends(4), doristest.WithLoadThroughput(ceiling))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	ddl := "CREATE TABLE t (id BIGINT, note VARCHAR(2048)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	if err := srv.CreateTable("bench", ddl); err != nil {
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
	row := []byte(`{"id":1,"note":"`)
	for len(row) < 1022 {
		row = append(row, 'x')
	}
	row = append(row, `"}`...)
	const rows, perCheckpoint, partitions = 32 << 10, 4 << 10, 16
	ctx := context.Background()
	var wall, cpu time.Duration
	var labels, decisions int
	for iter := 0; b.Loop(); iter++ {
		job := fmt.Sprintf("bench%d", iter) // a fresh label prefix per run on the one emulator
		owner := checkpoint.Owner{Job: job, DB: "bench", Table: "t", Writer: "0"}
		ld, err := loader.New(client, loader.Config{Job: job, DB: "bench", Table: "t", SubLoads: k,
			Store: checkpoint.NewMemory(owner),
			Knobs: &loader.TestingKnobs{AfterPrecommit: func(uint64, *doris.LoadResult) { labels++ }}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ld.Recover(ctx); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime(b)
		for i := range rows {
			if err := ld.WriteKey(ctx, uint64(i%partitions), row); err != nil {
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
	loaded, _, err := srv.Counts("bench", "t")
	if err != nil {
		b.Fatal(err)
	}
	if want := int64(rows * b.N); loaded != want {
		b.Fatalf("emulator counted %d rows, wrote %d", loaded, want)
	}
	gb := float64(b.N) * float64(rows*(len(row)+1)) / 1e9
	b.ReportMetric(gb*1e3/wall.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/gb, "CPU-s/GB")
	b.ReportMetric(float64(labels)/float64(decisions), "labels/checkpoint")
}
