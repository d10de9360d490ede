package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// newDoris returns a Doris client for the parent's emulator: Stream Load
// goes through the FE's 307 to the BE, as in production; with s.TLSCAPEM
// both hops are https (the emulator's MySQL front stays plain).
func newDoris(s spec) (*doris.Client, error) {
	cfg := doris.Config{FE: []string{s.FE}, MySQL: s.MySQL, User: "root", BESpread: doris.BESpread(s.BESpread)}
	if s.TLSCAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(s.TLSCAPEM)) {
			return nil, fmt.Errorf("doris client: the spec's CA (tls_ca_pem) holds no PEM certificate")
		}
		cfg.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		cfg.MySQLTLS = doris.MySQLTLSOff
	}
	c, err := doris.NewClient(cfg)
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
		PartitionRefresh: -1, ClientID: "doris-sink-bench", FetchMaxBytes: s.FetchMaxBytes,
	}
	if kafka.IsRegistryFormat(s.Format) {
		typ := sr.TypeAvro
		switch s.Format {
		case kafka.FormatProtobuf:
			typ = sr.TypeProtobuf
		case kafka.FormatJSONSchema:
			typ = sr.TypeJSON
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
// was consumed up to end; then it calls last.
func drainAtEnd(c **kafka.Connector, end map[int32]int64, last func()) func(kafka.Position) {
	return func(pos kafka.Position) {
		for p, e := range end {
			if pos.Offsets[p] < e {
				return
			}
		}
		if last != nil {
			last()
		}
		(*c).Drain()
	}
}

// loadClock is the Doris client with the start of its first Stream Load
// recorded (the "first begin" fixed cost).
type loadClock struct {
	*doris.Client
	first atomic.Int64
}

// StreamLoad records the first call's start and runs the client's.
func (l *loadClock) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if l.first.Load() == 0 {
		l.first.CompareAndSwap(0, time.Now().UnixNano())
	}
	return l.Client.StreamLoad(ctx, req, body)
}

// recoverClock is the Loader with its Recover call timed; every other
// method, Write and WriteKey included, is the Loader's own.
type recoverClock struct {
	*loader.Loader
	start, end time.Time
}

// Recover times the Loader's.
func (r *recoverClock) Recover(ctx context.Context) (json.RawMessage, error) {
	r.start = time.Now()
	raw, err := r.Loader.Recover(ctx)
	r.end = time.Now()
	return raw, err
}

// runSink loads the topic through the Connector and the Loader into the
// counting table and returns when the last checkpoint is committed. After
// each poll (once its records were handed to the loader) it samples the
// steady-state window on the bytes consumed.
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
	clock := &loadClock{Client: client}
	ld, err := newLoader(clock, s, nil)
	if err != nil {
		return res, err
	}
	sink := &recoverClock{Loader: ld}
	probe := newWindowProbe(s.TotalBytes)
	if err := m.watch(probe); err != nil {
		ld.Close(ctx)
		return res, err
	}
	var conn *kafka.Connector
	drain := drainAtEnd(&conn, s.End, func() { res.LastByte = time.Now().UnixNano() })
	conn, err = newConnector(s, sink,
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(pos kafka.Position) {
			met := conn.Metrics()
			recs := met.Records.Load()
			if res.FirstRecord == 0 && recs > 0 {
				res.FirstRecord = time.Now().UnixNano()
			}
			probe.observe(met.Bytes.Load(), recs)
			if res.LastByte == 0 {
				drain(pos)
			}
		}}),
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
	if err := m.stop(&res); err != nil {
		return res, err
	}
	res.Done = time.Now().UnixNano()
	res.Bytes = conn.Metrics().Bytes.Load() // value bytes, as the baseline counts
	res.SubLoadsEnd = ld.SubLoads(s.Table)
	res.Window = probe.result()
	res.FirstBegin = clock.first.Load()
	if !sink.start.IsZero() {
		res.RecoverStart, res.RecoverEnd = sink.start.UnixNano(), sink.end.UnixNano()
	}
	return res, nil
}
