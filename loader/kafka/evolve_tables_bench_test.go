//go:build unix

package kafka

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// knownEvolver is a SchemaEvolver of a table that holds every field
// already: it never changes the table (the benchmark's steady state).
type knownEvolver struct{}

func (knownEvolver) AddsColumns() bool { return true }

func (knownEvolver) Needs(_ context.Context, in Incoming) ([]schema.Column, bool, error) {
	cols := make([]schema.Column, len(in.Fields))
	for i, f := range in.Fields {
		cols[i] = schema.Column{Name: f.Name, Type: "STRING", Nullable: true}
	}
	return cols, false, nil
}

func (e knownEvolver) Apply(ctx context.Context, in Incoming) ([]schema.Column, error) {
	cols, _, err := e.Needs(ctx, in)
	return cols, err
}

// BenchmarkCDCTables is BenchmarkLoaderTables (loader/multi_bench_test.go)
// with the Debezium path in front: the same number of records (32 Ki
// Debezium change events with their Connect schema, about 1.5 KiB each, 8
// checkpoints) of 1, 10 and 50 source tables, interleaved as one topic
// carries them, each routed by {db}_{table}, converted by its table's
// converter (per-table schema tracker: no schema change in the steady
// state) and loaded through the emulator in counting mode. No Kafka: the
// records are in memory. Per op (-benchtime=1x): MB/s and CPU-s per GB of
// record values (user+system of the whole process), labels per checkpoint.
func BenchmarkCDCTables(b *testing.B) {
	for _, tables := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) { benchCDCTables(b, tables) })
	}
}

func benchCDCTables(b *testing.B, tables int) {
	srv, err := doristest.NewServer(doristest.SeedDatabases("bench"), doristest.WithoutAdmin())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	names := make([]string, tables)
	recs := make([]*kgo.Record, tables)
	fields := []dbzField{{"id", "int64", ""}, {"qty", "int32", ""}, {"sku", "string", ""}, {"note", "string", ""}}
	note := strings.Repeat("x", 1000)
	for k := range names {
		names[k] = fmt.Sprintf("shop_t%d", k)
		ddl := fmt.Sprintf("CREATE TABLE %s (id BIGINT, qty INT, sku VARCHAR(32), note VARCHAR(2048)) "+
			"UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", names[k])
		if err := srv.CreateTable("bench", ddl); err != nil {
			b.Fatal(err)
		}
		if err := srv.SetCounting("bench", names[k], true); err != nil {
			b.Fatal(err)
		}
		recs[k] = shopRecord(fmt.Sprintf("t%d", k), fields, "c", k, fmt.Sprintf(`{"id":%d,"qty":3,"sku":"sku-%d","note":%q}`, k, k, note))
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	const n, perCheckpoint = 32 << 10, 4 << 10
	ctx := context.Background()
	var wall, cpu time.Duration
	var labels, decisions int
	var valueBytes int64
	for b.Loop() {
		owner := checkpoint.Owner{Job: "bench", DB: "bench", Table: names[0], Writer: "0"}
		ld, err := loader.New(client, loader.Config{Job: "bench", DB: "bench", Table: names[0], Store: checkpoint.NewMemory(owner),
			Properties: RequiredProperties(FormatDebezium),
			Knobs:      &loader.TestingKnobs{AfterPrecommit: func(uint64, *doris.LoadResult) { labels++ }}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ld.Recover(ctx); err != nil {
			b.Fatal(err)
		}
		conv, err := NewConverter(ConvertConfig{Format: FormatDebezium})
		if err != nil {
			b.Fatal(err)
		}
		conv.TrackSchemas()
		c := &Connector{cfg: Config{Routing: Routing{DebeziumTemplate: "{db}_{table}"}}, conv: conv, metrics: &Metrics{},
			o: defaultOptions()}
		c.evo.perTable = true
		c.evo.newFor = func(string) SchemaEvolver { return knownEvolver{} }
		start, cpu0 := time.Now(), benchCPU(b)
		for i := range n {
			r := recs[i%tables]
			row, table, te, err := c.convert(context.Background(), r)
			if err == nil {
				row, err = c.evolve(ctx, te, r, row, func() error { return nil })
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := ld.WriteTo(ctx, table, row); err != nil {
				b.Fatal(err)
			}
			c.pend.rows++
			c.evo.wrote(te)
			valueBytes += int64(len(r.Value))
			if (i+1)%perCheckpoint == 0 {
				if err := ld.Checkpoint(ctx, []byte(fmt.Sprint(i+1))); err != nil {
					b.Fatal(err)
				}
				c.pend = pending{}
				c.evo.reset()
				decisions++
			}
		}
		if err := ld.Close(ctx); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += benchCPU(b) - cpu0
	}
	b.StopTimer()
	var loaded int64
	for _, name := range names {
		r, _, err := srv.Counts("bench", name)
		if err != nil {
			b.Fatal(err)
		}
		loaded += r
	}
	if want := int64(n * b.N); loaded != want {
		b.Fatalf("emulator counted %d rows, wrote %d", loaded, want)
	}
	gb := float64(valueBytes) / 1e9
	b.ReportMetric(gb*1e3/wall.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/gb, "CPU-s/GB")
	b.ReportMetric(float64(labels)/float64(decisions), "labels/checkpoint")
}

// benchCPU is the user+system CPU time of the process so far.
func benchCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
