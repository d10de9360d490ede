package demo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// cdcConfig is the CDC round's job: the Debezium topic routed by
// {db}_{table}, each table created from its first record's schema and
// evolved (add_columns). doris.table (the store's owner) is one of the
// routed tables.
func (e *env) cdcConfig(dir string) *config.Config {
	return &config.Config{
		Job:   config.Job{Name: cdcJob, DataDir: filepath.Join(dir, "cdc")},
		Kafka: config.Kafka{Brokers: e.brokers, Topic: cdcTopic, Group: "doris-sink-demo-cdc", Start: config.Start{Mode: config.StartEarliest}},
		Doris: config.Doris{FE: []string{e.doris.FEURL()}, MySQL: e.doris.MySQLAddr(), User: "root",
			Database: demoDB, Table: cdcTables[0].target, Format: "json", Properties: map[string]string{"max_filter_ratio": "0"},
			CreateTable: config.CreateTable{Enabled: true, Buckets: 2, Replication: 1}},
		Delivery: config.Delivery{Guarantee: config.ExactlyOnce, CheckpointInterval: 100 * time.Millisecond,
			CheckpointMaxRows: 23},
		Records: config.Records{Format: config.RecordsDebezium, SchemaEvolution: config.EvolutionAddColumns},
		Routing: config.Routing{DebeziumTemplate: "{db}_{table}"},
	}
}

// runCDC is the demo's CDC round: a whole "shop" database's Debezium
// stream in one topic, loaded into three created tables through the
// planned crashes, with a schema change mid-stream and deletes; it prints
// the evidence and reports whether every check passed.
func (e *env) runCDC(ctx context.Context, dir string, n narrator, customers int) (bool, error) {
	n.say("")
	n.say("CDC round: one Debezium topic %q carrying shop.customers, shop.orders and shop.items, routed by {db}_{table}", cdcTopic)
	cfg := e.cdcConfig(dir)
	evs := cdcEvents(customers)
	chunks := splitCDC(evs, len(crashPoints)+1)
	changeAt := slices.IndexFunc(evs, func(e cdcEvent) bool { return e.v2 })
	for i, cp := range crashPoints {
		if err := e.produceCDC(ctx, chunks[i]); err != nil {
			return false, err
		}
		note := ""
		if from := i * len(evs) / len(chunks); changeAt >= from && changeAt < from+len(chunks[i]) {
			note = " (from here on shop.customers events carry a new column, email: a schema change)"
		}
		n.say("produced %d change events%s; running the job with failpoint %s=crash", len(chunks[i]), note, cp)
		fp := loader.NewFailpoints()
		if _, err := fp.Arm(cp, loader.Crash().Times(1)); err != nil {
			return false, err
		}
		if err := e.runJob(ctx, cfg, fp, 0); !errors.Is(err, loader.ErrCrashed) {
			return false, fmt.Errorf("%s: want a crash at %s, got %v", cdcJob, cp, err)
		}
		n.say("  %-18s crashed at %s (as if killed); restarting on the same store", cdcJob, cp)
	}
	last := chunks[len(chunks)-1]
	if err := e.produceCDC(ctx, last); err != nil {
		return false, err
	}
	n.say("produced the last %d change events (%d in all); running without failpoints until caught up, then draining", len(last), len(evs))
	if err := e.runJob(ctx, cfg, nil, int64(len(evs))); err != nil {
		return false, fmt.Errorf("%s: %w", cdcJob, err)
	}
	n.say("  %-18s caught up and drained", cdcJob)
	n.say("")
	n.say("CDC evidence:")
	return e.checkCDC(ctx, cfg, evs, n), nil
}

// splitCDC cuts evs into k nearly equal consecutive chunks.
func splitCDC(evs []cdcEvent, k int) [][]cdcEvent {
	out := make([][]cdcEvent, k)
	for i := range k {
		out[i] = evs[i*len(evs)/k : (i+1)*len(evs)/k]
	}
	return out
}

// produceCDC writes evs to the CDC topic, keyed by primary key (one row's
// events stay in one partition, in order).
func (e *env) produceCDC(ctx context.Context, evs []cdcEvent) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...), kgo.DefaultProduceTopic(cdcTopic))
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		rs[i] = &kgo.Record{Key: ev.Key(), Value: ev.JSON()}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce %s: %w", cdcTopic, err)
	}
	return nil
}

// checkCDC prints the CDC round's evidence: each table equals the source's
// final state (a missing, extra or stale row fails), every event was loaded
// exactly once (the committed txns' loaded rows per table equal the events
// of that table: a re-loaded event would count twice), the labels per
// checkpoint, the ledger's table changes, and no lingering transaction.
func (e *env) checkCDC(ctx context.Context, cfg *config.Config, evs []cdcEvent, n narrator) bool {
	want, events := cdcExpected(evs)
	ok := true
	for i := range cdcTables {
		t := &cdcTables[i]
		cols := t.finalColumns()
		rows, err := e.query(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+t.target)
		if err != nil {
			ok = n.check(false, "read %s: %v", t.target, err) && ok
			continue
		}
		got, dup := map[int64][]string{}, 0
		for _, r := range rows {
			id, _ := strconv.ParseInt(r[0], 10, 64)
			if _, seen := got[id]; seen {
				dup++
			}
			got[id] = r
		}
		same := dup == 0 && len(got) == len(want[t.target])
		for id, r := range want[t.target] {
			same = same && slices.Equal(got[id], r)
		}
		ok = n.check(same, "%s (created from the schema, columns %s) has %d rows = the source's %d after %d change events",
			t.target, strings.Join(cols, ", "), len(rows), len(want[t.target]), events[t.target]) && ok
	}
	entries, _, err := ledger.ReadFile(cfg.Job.DataDir)
	if err != nil {
		return n.check(false, "read the ledger: %v", err)
	}
	loaded := map[string]int64{}
	perCkpt := map[uint64]int{}
	var changes []string
	for _, en := range entries {
		switch en.Event {
		case ledger.EventCommitted:
			loaded[en.Table] += en.RowsLoaded
			perCkpt[en.Checkpoint]++
		case ledger.EventSchemaChanged, ledger.EventTableCreated:
			changes = append(changes, fmt.Sprintf("%s %s.%s: %s", en.Event, en.DB, en.Table, firstLine(en.Note)))
		}
	}
	for _, t := range cdcTables {
		ok = n.check(loaded[t.target] == int64(events[t.target]), "exactly once: the committed txns of %s loaded %d rows for %d change events (deletes included)",
			t.target, loaded[t.target], events[t.target]) && ok
	}
	hist := map[int]int{}
	for _, k := range perCkpt {
		hist[k]++
	}
	n.check(len(perCkpt) > 0, "labels per checkpoint (one txn per table touched): %d checkpoints with 1 label, %d with 2, %d with 3",
		hist[1], hist[2], hist[3])
	created, changed := 0, 0
	for _, c := range changes {
		if strings.HasPrefix(c, ledger.EventTableCreated) {
			created++
		} else {
			changed++
			n.say("         ledger: %s", c)
		}
	}
	ok = n.check(created == len(cdcTables) && changed == 1, "ledger: %d table_created entries (one per table), %d schema_changed (the email column, once through the crashes)",
		created, changed) && ok
	for _, st := range []string{"precommitted", "prepare"} {
		rows, err := e.query(ctx, "SHOW TRANSACTION FROM "+demoDB+" WHERE status = '"+st+"'")
		ok = n.check(err == nil && len(rows) == 0, "no lingering %s transaction in any table: SHOW TRANSACTION WHERE status = '%s' returns %s",
			st, st, rowsOrErr(rows, err)) && ok
	}
	return ok
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
