package demo

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The Avro CDC round: database "shop" as Debezium's Avro converter writes
// it, one topic per table (srv.shop.customers, srv.shop.orders), routed by
// routing.debezium_template into tables the demo creates; customers'
// value schema gains a nullable email mid-stream (schema_evolution:
// add_columns adds the column).
const (
	avroCDCJob      = "demo-cdc-avro"
	avroCDCTemplate = "{db}_avro_{table}"
)

// avroCDCTables are the round's source tables and their Doris tables.
var avroCDCTables = []struct{ source, target, ddl string }{
	{"customers", "shop_avro_customers", "CREATE TABLE shop_avro_customers (id BIGINT, name VARCHAR(64)) UNIQUE KEY(id) " +
		`DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true", "replication_num" = "1")`},
	{"orders", "shop_avro_orders", "CREATE TABLE shop_avro_orders (id BIGINT, customer_id BIGINT, amount BIGINT) UNIQUE KEY(id) " +
		`DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true", "replication_num" = "1")`},
}

func avroCDCTopic(source string) string { return "srv.shop." + source }

// avroEnvelope is Debezium's Avro value schema of a shop table whose row
// has fields (Avro field JSON).
func avroEnvelope(table, fields string) string {
	return `{"type":"record","name":"Envelope","namespace":"srv.shop.` + table + `","fields":[` +
		`{"name":"before","type":["null",{"type":"record","name":"Value","fields":[` + fields + `]}],"default":null},` +
		`{"name":"after","type":["null","Value"],"default":null},` +
		`{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[` +
		`{"name":"db","type":"string"},{"name":"table","type":"string"}]}},` +
		`{"name":"op","type":"string"},{"name":"ts_ms","type":["null","long"],"default":null}]}`
}

// avroCDCEvent is one change of a source row: op c/u/d; email is set
// from the schema change on (customers only).
type avroCDCEvent struct {
	table              int // index in avroCDCTables
	op                 string
	id, customer, amnt int64
	name, email        string
	v2                 bool
}

// avroCDCEvents is the round's stream: customers and orders created,
// updated, some deleted; from the middle on customers carry email.
func avroCDCEvents(customers int) []avroCDCEvent {
	var evs []avroCDCEvent
	for i := 1; i <= customers; i++ {
		id := int64(i)
		v2 := i > customers/2
		email := ""
		if v2 {
			email = fmt.Sprintf("c%d@shop.example", i)
		}
		evs = append(evs,
			avroCDCEvent{table: 0, op: "c", id: id, name: fmt.Sprintf("customer %d", i), email: email, v2: v2},
			avroCDCEvent{table: 1, op: "c", id: 100 + id, customer: id, amnt: 10 * id},
			avroCDCEvent{table: 1, op: "u", id: 100 + id, customer: id, amnt: 10*id + 1})
		if i%4 == 0 {
			evs = append(evs, avroCDCEvent{table: 1, op: "d", id: 100 + id, customer: id, amnt: 10*id + 1})
		}
		if i%5 == 0 {
			evs = append(evs, avroCDCEvent{table: 0, op: "u", id: id, name: fmt.Sprintf("customer %d (renamed)", i), email: email, v2: v2})
		}
		if i%7 == 0 {
			evs = append(evs, avroCDCEvent{table: 0, op: "d", id: id, name: fmt.Sprintf("customer %d", i), email: email, v2: v2})
		}
	}
	return evs
}

// avroCDC is the registry side of the round: schema ids of customers v1
// and v2 and of orders.
type avroCDC struct {
	srv              *srtest.Server
	cust1, cust2, or int
}

func startAvroCDC() (*avroCDC, error) {
	srv, err := srtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	a := &avroCDC{srv: srv}
	for _, s := range []struct {
		subject, schema string
		id              *int
	}{
		{avroCDCTopic("customers") + "-value", avroEnvelope("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"}`), &a.cust1},
		{avroCDCTopic("customers") + "-value", avroEnvelope("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}`), &a.cust2},
		{avroCDCTopic("orders") + "-value", avroEnvelope("orders", `{"name":"id","type":"long"},{"name":"customer_id","type":"long"},{"name":"amount","type":"long"}`), &a.or},
	} {
		if *s.id, err = srv.Registry().Register(s.subject, sr.Schema{Schema: s.schema}); err != nil {
			srv.Close()
			return nil, fmt.Errorf("register %s: %w", s.subject, err)
		}
	}
	return a, nil
}

func appendAvroString(b []byte, s string) []byte {
	return append(binary.AppendVarint(b, int64(len(s))), s...)
}

// encode is ev's record value in the Confluent wire format: the Avro
// binary encoding of its envelope (unions as branch index + value).
func (a *avroCDC) encode(ev avroCDCEvent) []byte {
	id := a.or
	if ev.table == 0 {
		id = a.cust1
		if ev.v2 {
			id = a.cust2
		}
	}
	var img []byte
	img = binary.AppendVarint(img, ev.id)
	if ev.table == 0 {
		img = appendAvroString(img, ev.name)
		if ev.v2 {
			img = appendAvroString(binary.AppendVarint(img, 1), ev.email)
		}
	} else {
		img = binary.AppendVarint(binary.AppendVarint(img, ev.customer), ev.amnt)
	}
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	if ev.op == "d" {
		b = append(binary.AppendVarint(b, 1), img...) // before
		b = binary.AppendVarint(b, 0)                 // after: null
	} else {
		b = binary.AppendVarint(b, 0)
		b = append(binary.AppendVarint(b, 1), img...)
	}
	b = appendAvroString(appendAvroString(b, "shop"), avroCDCTables[ev.table].source)
	b = appendAvroString(b, ev.op)
	return binary.AppendVarint(binary.AppendVarint(b, 1), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
}

// avroCDCConfig is the round's job.
func (e *env) avroCDCConfig(dir, registryURL string) *config.Config {
	var topics []string
	for _, t := range avroCDCTables {
		topics = append(topics, avroCDCTopic(t.source))
	}
	return &config.Config{
		Job: config.Job{Name: avroCDCJob, DataDir: filepath.Join(dir, "cdc-avro")},
		Kafka: config.Kafka{Brokers: e.brokers, Topics: topics, Group: "doris-sink-demo-cdc-avro",
			Start: config.Start{Mode: config.StartEarliest}},
		Doris: config.Doris{FE: []string{e.doris.FEURL()}, MySQL: e.doris.MySQLAddr(), User: "root",
			Database: demoDB, Table: avroCDCTables[0].target, Format: "json", Properties: map[string]string{"max_filter_ratio": "0"}},
		Delivery: config.Delivery{Guarantee: config.ExactlyOnce, CheckpointInterval: 100 * time.Millisecond, CheckpointMaxRows: 19},
		Records: config.Records{Format: config.RecordsAvro, Envelope: config.EnvelopeDebezium, SchemaEvolution: config.EvolutionAddColumns,
			SchemaRegistry: config.SchemaRegistry{URLs: []string{registryURL}}},
		Routing: config.Routing{DebeziumTemplate: avroCDCTemplate},
	}
}

// runAvroCDC is the demo's Avro CDC round: two tables of database shop as
// Debezium Avro topics, routed by routing.debezium_template, with the
// schema change and deletes (op d and tombstones), through the planned
// crashes; it prints the evidence and reports whether every check passed.
func (e *env) runAvroCDC(ctx context.Context, dir string, n narrator, customers int) (bool, error) {
	n.say("")
	n.say("Avro CDC round: database shop as Debezium Avro topics %s and %s (Confluent wire format, in-process Schema Registry), routed by %s",
		avroCDCTopic("customers"), avroCDCTopic("orders"), avroCDCTemplate)
	a, err := startAvroCDC()
	if err != nil {
		return false, err
	}
	defer a.srv.Close()
	var topics []string
	for _, t := range avroCDCTables {
		topics = append(topics, avroCDCTopic(t.source))
		if _, err := e.db.ExecContext(ctx, t.ddl); err != nil {
			return false, fmt.Errorf("mysql %q: %w", t.ddl, err)
		}
	}
	if err := e.createTopics(ctx, topics); err != nil {
		return false, err
	}
	n.say("created demo.%s and demo.%s (Unique Key, merge-on-write) over MySQL; records.format avro, records.envelope debezium, schema_evolution add_columns",
		avroCDCTables[0].target, avroCDCTables[1].target)
	cfg := e.avroCDCConfig(dir, a.srv.URL())
	evs := avroCDCEvents(customers)
	k := len(crashPoints) + 1
	chunk := func(i int) []avroCDCEvent { return evs[i*len(evs)/k : (i+1)*len(evs)/k] }
	produced := 0
	for i, cp := range crashPoints {
		m, err := e.produceAvroCDC(ctx, a, chunk(i))
		if err != nil {
			return false, err
		}
		produced += m
		n.say("produced %d change events (%d records with the tombstones after deletes); running the job with failpoint %s=crash", len(chunk(i)), m, cp)
		fp := loader.NewFailpoints()
		if _, err := fp.Arm(cp, loader.Crash().Times(1)); err != nil {
			return false, err
		}
		if err := e.runJob(ctx, cfg, fp, 0); !errors.Is(err, loader.ErrCrashed) {
			return false, fmt.Errorf("%s: want a crash at %s, got %v", avroCDCJob, cp, err)
		}
		n.say("  %-18s crashed at %s (as if killed); restarting on the same store", avroCDCJob, cp)
	}
	m, err := e.produceAvroCDC(ctx, a, chunk(k-1))
	if err != nil {
		return false, err
	}
	produced += m
	n.say("produced the last %d change events (%d records in all; customers carry email from customer %d on); running without failpoints until caught up, then draining",
		len(chunk(k-1)), produced, customers/2+1)
	if err := e.runJob(ctx, cfg, nil, int64(produced)); err != nil {
		return false, fmt.Errorf("%s: %w", avroCDCJob, err)
	}
	n.say("  %-18s caught up and drained", avroCDCJob)
	n.say("")
	n.say("Avro CDC evidence:")
	return e.checkAvroCDC(ctx, cfg, evs, produced, n), nil
}

// createTopics creates topics of the demo's partition count.
func (e *env) createTopics(ctx context.Context, topics []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topics...)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("create topics %v: %w", topics, err)
	}
	return nil
}

// produceAvroCDC writes evs, keyed by primary key, each delete followed by
// its tombstone (as Debezium does); it returns the records written.
func (e *env) produceAvroCDC(ctx context.Context, a *avroCDC, evs []avroCDCEvent) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, ev := range evs {
		topic, key := avroCDCTopic(avroCDCTables[ev.table].source), fmt.Appendf(nil, `{"id":%d}`, ev.id)
		rs = append(rs, &kgo.Record{Topic: topic, Key: key, Value: a.encode(ev)})
		if ev.op == "d" {
			rs = append(rs, &kgo.Record{Topic: topic, Key: key})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	return len(rs), nil
}

// avroCDCExpected is each table's final rows as "col|col|…" by id, in
// the Doris tables' column order (customers with the added email last).
func avroCDCExpected(evs []avroCDCEvent) []map[int64]string {
	want := []map[int64]string{{}, {}}
	for _, ev := range evs {
		if ev.op == "d" {
			delete(want[ev.table], ev.id)
			continue
		}
		if ev.table == 0 {
			email := "NULL"
			if ev.email != "" {
				email = ev.email
			}
			want[0][ev.id] = fmt.Sprintf("%d|%s|%s", ev.id, ev.name, email)
		} else {
			want[1][ev.id] = fmt.Sprintf("%d|%d|%d", ev.id, ev.customer, ev.amnt)
		}
	}
	return want
}

// checkAvroCDC prints the round's evidence: each table equals the
// source's final state (updates, deletes, the new column's values), the
// ledger's one schema change, verify reconciling (tombstones accounted
// for), and no lingering transaction.
func (e *env) checkAvroCDC(ctx context.Context, cfg *config.Config, evs []avroCDCEvent, produced int, n narrator) bool {
	ok := true
	want := avroCDCExpected(evs)
	cols := []string{"id, name, IFNULL(email, 'NULL')", "id, customer_id, amount"}
	for i, t := range avroCDCTables {
		rows, err := e.query(ctx, "SELECT "+cols[i]+" FROM "+t.target)
		if err != nil {
			ok = n.check(false, "read %s: %v", t.target, err) && ok
			continue
		}
		got := map[int64]string{}
		for _, r := range rows {
			id, _ := strconv.ParseInt(r[0], 10, 64)
			got[id] = strings.Join(r, "|")
		}
		same := len(rows) == len(want[i]) && len(got) == len(want[i])
		for id, r := range want[i] {
			same = same && got[id] == r
		}
		what := "updates and deletes applied"
		if i == 0 {
			what += ", the added email column holds each v2 event's value (NULL before the change)"
		}
		ok = n.check(same, "%s has %d rows = the source's final state (%s)", t.target, len(rows), what) && ok
	}
	entries, _, err := ledger.ReadFile(cfg.Job.DataDir)
	if err != nil {
		return n.check(false, "read the ledger: %v", err)
	}
	var changes []string
	for _, en := range entries {
		if en.Event == ledger.EventSchemaChanged {
			changes = append(changes, fmt.Sprintf("%s %s.%s: %s", en.Event, en.DB, en.Table, firstLine(en.Note)))
		}
	}
	for _, c := range changes {
		n.say("         ledger: %s", c)
	}
	ok = n.check(len(changes) == 1, "ledger: %d schema_changed entry (the email column, added once through the crashes)", len(changes)) && ok
	rep, err := verify.VerifyConfig(ctx, &cmdutil.Factory{}, cfg, false, false)
	if err != nil {
		return n.check(false, "verify %s: %v", avroCDCJob, err) && false
	}
	msg := fmt.Sprintf("verify: %d checkpoints, labels VISIBLE, %d offsets contiguous (the tombstones accounted for), %d rows loaded",
		len(rep.Checkpoints), rep.Offsets, rep.RowsLoaded)
	if err := rep.Err(); err != nil {
		msg += fmt.Sprintf(" — %v: %v", err, rep.Findings)
	}
	ok = n.check(rep.Err() == nil && rep.Offsets == int64(produced), "%s", msg) && ok
	for _, st := range []string{"precommitted", "prepare"} {
		rows, err := e.query(ctx, "SHOW TRANSACTION FROM "+demoDB+" WHERE status = '"+st+"'")
		ok = n.check(err == nil && len(rows) == 0, "no lingering %s transaction: SHOW TRANSACTION WHERE status = '%s' returns %s",
			st, st, rowsOrErr(rows, err)) && ok
	}
	return ok
}
