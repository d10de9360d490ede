package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

const (
	demoDB     = "demo"
	demoTopic  = "orders"
	demoJob    = "demo"
	partitions = 3
	stateTable = "order_state_eos"
	auditTable = "order_event_audit"
)

// The article's tables (seed article, "最小故障实验").
const (
	stateDDL = `CREATE TABLE order_state_eos (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) ` +
		`UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 4 PROPERTIES ` +
		`("enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "op_version")`
	auditDDL = `CREATE TABLE order_event_audit (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) ` +
		`DUPLICATE KEY(order_id, op_version) DISTRIBUTED BY HASH(order_id) BUCKETS 4`
)

// crashPoints are the cut points the demo crashes at, one run each: during
// streaming, after precommit, and on both sides of the decision (docs/design.md
// §2; loader/failpoints.go says what is durable at each).
var crashPoints = []string{loader.FailMidStream, loader.FailAfterPrecommit, loader.FailBeforeDecide, loader.FailAfterDecide}

// env is the demo's Kafka, Doris and per-table configs.
type env struct {
	kafka   *kfake.Cluster
	brokers []string
	doris   *doristest.Server
	db      *sql.DB
	client  *doris.Client
	// logTo receives the connectors' errors (see plannedCrash). Both
	// connectors' handlers write to it at once, so it is a lockedWriter.
	logTo  io.Writer
	tables []*config.Config
	// avro serves --format avro and protobuf; nil for JSON.
	avro *registryEvents
}

func startEnv(ctx context.Context, dir string, logTo io.Writer, format string) (*env, error) {
	e := &env{logTo: &lockedWriter{w: logTo}}
	var err error
	if format == formatAvro || format == formatProtobuf {
		if e.avro, err = startRegistry(format); err != nil {
			return nil, err
		}
	}
	e.kafka, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, demoTopic, cdcTopic))
	if err != nil {
		if e.avro != nil {
			e.avro.srv.Close()
		}
		return nil, fmt.Errorf("start kafka: %w", err)
	}
	e.brokers = e.kafka.ListenAddrs()
	e.doris, err = doristest.NewServer(doristest.WithoutAdmin())
	if err != nil {
		e.kafka.Close()
		return nil, fmt.Errorf("start doris emulator: %w", err)
	}
	mc := mysql.NewConfig()
	mc.User, mc.Net, mc.Addr = "root", "tcp", e.doris.MySQLAddr()
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		e.close()
		return nil, err
	}
	e.db = sql.OpenDB(conn)
	for _, t := range []string{stateTable, auditTable} {
		c := &config.Config{
			Job:   config.Job{Name: demoJob, DataDir: filepath.Join(dir, t)},
			Kafka: config.Kafka{Brokers: e.brokers, Topic: demoTopic, Group: "doris-sink-demo-" + t, Start: config.Start{Mode: config.StartEarliest}},
			Doris: config.Doris{FE: []string{e.doris.FEURL()}, MySQL: e.doris.MySQLAddr(), User: "root",
				Database: demoDB, Table: t, Format: "json", Properties: map[string]string{"max_filter_ratio": "0"}},
			Delivery: config.Delivery{Guarantee: config.ExactlyOnce, CheckpointInterval: 100 * time.Millisecond,
				CheckpointMaxRows: 17},
			Records: config.Records{Format: config.RecordsJSON},
		}
		if e.avro != nil {
			c.Records = config.Records{Format: e.avro.format,
				SchemaRegistry: config.SchemaRegistry{URLs: []string{e.avro.srv.URL()}}}
		}
		if t == stateTable {
			c.Doris.Properties["function_column.sequence_col"] = "op_version"
			c.Doris.Properties["hidden_columns"] = "__DORIS_DELETE_SIGN__"
		}
		e.tables = append(e.tables, c)
	}
	e.client, err = doris.NewClient(doris.Config{FE: []string{e.doris.FEURL()}, MySQL: e.doris.MySQLAddr(), User: "root"})
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	if e.client != nil {
		e.client.Close()
	}
	if e.db != nil {
		e.db.Close()
	}
	e.doris.Close()
	e.kafka.Close()
	if e.avro != nil {
		e.avro.srv.Close()
	}
}

// createTables creates the database and tables over the MySQL protocol,
// as a user would.
func (e *env) createTables(ctx context.Context) error {
	for _, q := range []string{"CREATE DATABASE " + demoDB, "USE " + demoDB, stateDDL, auditDDL} {
		if _, err := e.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql %q: %w", q, err)
		}
	}
	return nil
}

// produce writes evs to the topic, keyed by order id, and waits for acks.
func (e *env) produce(ctx context.Context, evs []event) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...), kgo.DefaultProduceTopic(demoTopic))
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		v := ev.JSON()
		if e.avro != nil {
			if v, err = e.avro.encode(ev); err != nil {
				return err
			}
		}
		rs[i] = &kgo.Record{Key: ev.Key(), Value: v}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// runJob builds one table's job and runs it. With drainAt > 0 the
// connector is drained once it consumed that many offsets in all.
func (e *env) runJob(ctx context.Context, c *config.Config, fp *loader.Failpoints, drainAt int64) error {
	var conn *kafka.Connector
	knobs := &kafka.TestingKnobs{}
	if drainAt > 0 {
		knobs.AfterPoll = func(p kafka.Position) {
			var n int64
			for _, o := range p.Offsets {
				n += o
			}
			for _, offs := range p.Topics { // several topics
				for _, o := range offs {
					n += o
				}
			}
			if n >= drainAt {
				conn.Drain()
			}
		}
	}
	h := newPlannedCrash(slog.NewTextHandler(e.logTo, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if fp != nil {
		fp.OnCrash(h.arm)
	}
	job, err := run.Build(c, run.Deps{Doris: e.client, Failpoints: fp, Logger: slog.New(h),
		ConnectorOpts: []kafka.Opt{kafka.WithTestingKnobs(knobs),
			kafka.WithKgoOpts(kgo.FetchMaxWait(50 * time.Millisecond))}})
	if err != nil {
		return err
	}
	conn = job.Connector
	return conn.Run(ctx)
}

// runUntilCrash runs both tables' connectors with the failpoint armed to
// crash once, and checks that each did crash there.
func (e *env) runUntilCrash(ctx context.Context, point string, n narrator) error {
	return e.both(func(c *config.Config) error {
		fp := loader.NewFailpoints()
		if _, err := fp.Arm(point, loader.Crash().Times(1)); err != nil {
			return err
		}
		err := e.runJob(ctx, c, fp, 0)
		if !errors.Is(err, loader.ErrCrashed) {
			return fmt.Errorf("%s: want a crash at %s, got %v", c.Doris.Table, point, err)
		}
		n.say("  %-18s crashed at %s (as if killed); restarting on the same store", c.Doris.Table, point)
		return nil
	})
}

// runToEnd runs both connectors without failpoints until they caught up
// with the topic, then drains them.
func (e *env) runToEnd(ctx context.Context, total int, n narrator) error {
	return e.both(func(c *config.Config) error {
		if err := e.runJob(ctx, c, nil, int64(total)); err != nil {
			return fmt.Errorf("%s: %w", c.Doris.Table, err)
		}
		n.say("  %-18s caught up and drained", c.Doris.Table)
		return nil
	})
}

// both runs fn for each table concurrently.
func (e *env) both(fn func(*config.Config) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(e.tables))
	for i, c := range e.tables {
		wg.Go(func() { errs[i] = fn(c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lockedWriter serialises writes of several slog handlers to one writer
// (a handler locks only its own output).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
