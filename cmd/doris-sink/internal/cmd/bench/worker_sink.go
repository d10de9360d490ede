package bench

import (
	"context"
	"fmt"
	"maps"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// newDoris returns a Doris client for the parent's emulator: Stream Load
// goes through the FE's 307 to the BE, as in production.
func newDoris(s spec) (*doris.Client, error) {
	c, err := doris.NewClient(doris.Config{FE: []string{s.FE}, MySQL: s.MySQL, User: "root", BESpread: doris.BESpread(s.BESpread)})
	if err != nil {
		return nil, fmt.Errorf("doris client: %w", err)
	}
	return c, nil
}

// newLoader builds a loader as `doris-sink run` does: a file checkpoint
// store (fsync'd) and the evidence ledger in s.DataDir.
func newLoader(client loader.Doris, s spec, knobs *loader.TestingKnobs) (*loader.Loader, error) {
	g, err := loader.ParseGuarantee(s.Mode)
	if err != nil {
		return nil, err
	}
	source := "kafka:" + s.Topic
	if s.Topic == "" {
		source = "generated"
	}
	store, err := checkpoint.OpenFile(s.DataDir, checkpoint.Owner{Job: s.Job, DB: s.DB, Table: s.Table, Source: source, Writer: "0"})
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	props := map[string]string{}
	if s.Format == "csv" {
		props["column_separator"] = ","
	}
	if s.Compress != "" {
		props["compress_type"] = s.Compress
	}
	maps.Copy(props, kafka.RequiredProperties(s.Format))
	ld, err := loader.New(client, loader.Config{
		Job: s.Job, DB: s.DB, Table: s.Table, Format: kafka.LoaderFormat(s.Format), Properties: props,
		Guarantee: g, Store: store, LedgerDir: s.DataDir, Source: source, Knobs: knobs,
		SubLoads: s.SubLoads, SubLoadsAuto: s.SubLoadsAuto,
	})
	if err != nil {
		store.Close()
		return nil, err
	}
	return ld, nil
}

// newConnector builds the Kafka connector over sink: interval checkpoints
// (and s.MaxRows), no group commits, no partition refresh.
func newConnector(s spec, sink kafka.Sink, opts ...kafka.Opt) (*kafka.Connector, error) {
	cfg := kafka.Config{
		Brokers: s.Brokers, Topic: s.Topic, Format: s.Format,
		CheckpointInterval: s.Interval, CheckpointMaxRows: s.MaxRows,
		PartitionRefresh: -1, ClientID: "doris-sink-bench",
	}
	if kafka.IsRegistryFormat(s.Format) {
		typ := sr.TypeAvro
		if s.Format == kafka.FormatProtobuf {
			typ = sr.TypeProtobuf
		}
		reg, err := registry.New(registry.Config{URLs: []string{s.Registry}, SchemaType: typ})
		if err != nil {
			return nil, err // the caller closes sink
		}
		cfg.Schemas = reg
	}
	return kafka.New(cfg, sink, opts...)
}

// drainAtEnd returns an AfterPoll knob that drains c once every partition
// was consumed up to end.
func drainAtEnd(c **kafka.Connector, end map[int32]int64) func(kafka.Position) {
	return func(pos kafka.Position) {
		for p, e := range end {
			if pos.Offsets[p] < e {
				return
			}
		}
		(*c).Drain()
	}
}

// runSink loads the topic through the Connector and the Loader into the
// counting table and returns when the last checkpoint is committed.
func runSink(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	m, err := startMeter(s.CPUProfile)
	if err != nil {
		return res, err
	}
	client, err := newDoris(s)
	if err != nil {
		return res, err
	}
	defer client.Close()
	ld, err := newLoader(client, s, nil)
	if err != nil {
		return res, err
	}
	var conn *kafka.Connector
	conn, err = newConnector(s, ld,
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: drainAtEnd(&conn, s.End)}),
		kafka.WithOnCheckpoint(func(st kafka.CheckpointStats) {
			if st.Err == nil {
				res.Checkpts++
				res.Records += st.Records
			}
		}))
	if err != nil {
		ld.Close(ctx)
		return res, err
	}
	if err := conn.Run(ctx); err != nil {
		return res, err
	}
	m.stop(&res)
	res.Bytes = conn.Metrics().Bytes.Load() // value bytes, as the baseline counts
	res.SubLoadsEnd = ld.SubLoads(s.Table)
	return res, nil
}
