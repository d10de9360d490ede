// Package demo implements `doris-sink demo`, the README's first command:
// an in-process Kafka (kfake) and Doris emulator, the seed article's order
// tables created over the MySQL protocol, order events with a late older
// event and deletes, two connectors (a Unique Key state table and a
// Duplicate Key audit table) crashed at several cut points and restarted
// on the same stores, then the evidence: one row per key, the state
// rebuilt from the audit table equals the served one, audit rows ==
// events produced, the ledgers verify, no transaction left PRECOMMITTED.
// Then a CDC round (cdc.go): one Debezium topic carrying three source
// tables, routed by {db}_{table} into tables created from the schema, with
// a schema change mid-stream and deletes, crashed at the same cut points;
// its evidence: each table equals the source, each event loaded once,
// labels per checkpoint, the ledger's table changes. Then an Avro CDC
// round (cdc_avro.go): two tables of a database as Debezium Avro topics
// (records.envelope debezium through an in-process Schema Registry),
// routed by routing.debezium_template, with a new column mid-stream,
// deletes and tombstones, through the same crashes; its evidence: each
// table equals the source, the schema change once, verify reconciling.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// Options are the inputs of `doris-sink demo`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	// DataDir holds the checkpoint stores and ledgers; empty: a temporary
	// directory removed at the end.
	DataDir string
	// Orders is the number of orders (4 events or fewer each).
	Orders int
	// Timeout bounds the whole demo.
	Timeout time.Duration
	// Format is the events' record format: "json" (default), "avro" or
	// "protobuf" (Confluent wire format through an in-process Schema
	// Registry).
	Format string
}

// NewCmdDemo returns the demo command. runF replaces Run in tests.
func NewCmdDemo(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show exactly-once on an in-process Kafka and Doris, with crashes",
		Long: `demo starts an in-process Kafka and Doris emulator, creates the order tables of
the exactly-once article (a Unique Key state table with a sequence column and a
Duplicate Key audit table), produces order events (a late cancel older than the
payment, some deletes), loads them with two connectors that are crashed at
several cut points and restarted, and prints the evidence that every event
was loaded exactly once. Then a CDC round: one Debezium topic carrying the
change events of three tables (shop.customers, shop.orders, shop.items) is
routed by {db}_{table} into tables created from the events' schema, with a
new column mid-stream and deletes, through the same crashes; its evidence is
printed too. Then an Avro CDC round: two tables of database shop as Debezium
Avro topics (Confluent wire format, in-process Schema Registry), routed by
routing.debezium_template, with a new nullable column mid-stream (added by
schema_evolution: add_columns), deletes and tombstones, through the same
crashes, checked row by row and by verify. It exits non-zero if any check fails.`,
		Example: `  go run ./cmd/doris-sink demo
  doris-sink demo --orders 200 --data-dir ./var/demo
  doris-sink demo --format avro
  doris-sink demo --format protobuf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Orders < 1 {
				return cmdutil.FlagErrorf("--orders %d: want at least 1", opts.Orders)
			}
			if opts.Format != "json" && opts.Format != formatAvro && opts.Format != formatProtobuf {
				return cmdutil.FlagErrorf("--format %q: want json, avro or protobuf", opts.Format)
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", "", "directory for checkpoint stores and ledgers (default: a temporary one, removed)")
	cmd.Flags().IntVar(&opts.Orders, "orders", 60, "number of orders")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "give up after this long")
	cmd.Flags().StringVar(&opts.Format, "format", "json", "record format of the events: json, or avro or protobuf (Confluent wire format through an in-process Schema Registry, records.format avro or protobuf)")
	return cmd
}

// ErrChecksFailed is returned when at least one evidence check failed.
var ErrChecksFailed = errors.New("demo: evidence checks failed")

// Run runs the demo and prints its narrative to opts.IO.Out.
func Run(ctx context.Context, opts *Options) error {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	dir := opts.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "doris-sink-demo-")
		if err != nil {
			return fmt.Errorf("demo data dir: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	env, err := startEnv(ctx, dir, opts.IO.ErrOut, opts.Format)
	if err != nil {
		return err
	}
	defer env.close()
	n := narrator{mu: &sync.Mutex{}, w: opts.IO.Out}
	n.say("Kafka (in-process kfake) at %s, Doris emulator FE %s, MySQL %s", env.brokers[0], env.doris.FEURL(), env.doris.MySQLAddr())
	if env.avro != nil {
		n.say("events are %s (Confluent wire format, schema id %d of %s-value) from the in-process Schema Registry at %s; the connectors read records.format %s",
			map[string]string{formatAvro: "Avro", formatProtobuf: "Protobuf"}[env.avro.format], env.avro.id, demoTopic, env.avro.srv.URL(), env.avro.format)
	}
	if err := env.createTables(ctx); err != nil {
		return err
	}
	n.say("created demo.%s (Unique Key, merge-on-write, sequence column op_version) and demo.%s (Duplicate Key audit) over MySQL", stateTable, auditTable)

	evs := orderEvents(opts.Orders)
	chunks := split(evs, len(crashPoints)+1)
	for i, cp := range crashPoints {
		if err := env.produce(ctx, chunks[i]); err != nil {
			return err
		}
		n.say("produced %d events; running both connectors with failpoint %s=crash", len(chunks[i]), cp)
		if err := env.runUntilCrash(ctx, cp, n); err != nil {
			return err
		}
	}
	last := chunks[len(chunks)-1]
	if err := env.produce(ctx, last); err != nil {
		return err
	}
	n.say("produced the last %d events (%d in all); running both connectors without failpoints until caught up, then draining", len(last), len(evs))
	if err := env.runToEnd(ctx, len(evs), n); err != nil {
		return err
	}
	n.say("")
	n.say("evidence:")
	if !env.check(ctx, evs, n) {
		n.say("RESULT: FAIL")
		return ErrChecksFailed
	}
	cdcOK, err := env.runCDC(ctx, dir, n, max(opts.Orders/2, 10))
	if err != nil {
		return err
	}
	if !cdcOK {
		n.say("RESULT: FAIL")
		return ErrChecksFailed
	}
	avroOK, err := env.runAvroCDC(ctx, dir, n, max(opts.Orders/2, 12))
	if err != nil {
		return err
	}
	if !avroOK {
		n.say("RESULT: FAIL")
		return ErrChecksFailed
	}
	n.say("RESULT: OK: every event loaded exactly once through %d crashes per table, and every change event of the CDC rounds (JSON and Avro) once into its own table", len(crashPoints))
	return nil
}

// split cuts evs into k nearly equal consecutive chunks.
func split(evs []event, k int) [][]event {
	out := make([][]event, k)
	for i := range k {
		out[i] = evs[i*len(evs)/k : (i+1)*len(evs)/k]
	}
	return out
}

// narrator prints the demo's story; safe for concurrent use.
type narrator struct {
	mu *sync.Mutex
	w  io.Writer
}

func (n narrator) say(format string, a ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fmt.Fprintf(n.w, format+"\n", a...)
}

func (n narrator) check(ok bool, format string, a ...any) bool {
	mark := "OK  "
	if !ok {
		mark = "FAIL"
	}
	n.say("  [%s] %s", mark, fmt.Sprintf(format, a...))
	return ok
}
