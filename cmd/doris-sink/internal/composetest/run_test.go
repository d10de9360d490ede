package composetest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// world is what every run of the matrix shares: one Kafka, one Doris
// emulator, one Schema Registry. Each point has its own topics, Doris
// database, subjects, job name and group, so they never meet.
type world struct {
	kc     *kfake.Cluster
	adm    *kadm.Client
	srv    *doristest.Server
	client *doris.Client
	reg    *srtest.Server
}

func newWorld(t *testing.T) *world {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root",
		MaxRetries: -1, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return &world{kc: kc, adm: kadm.NewClient(cl), srv: srv, client: client, reg: reg}
}

// event is one change of a source table's row.
type event struct {
	table string // a or b (source table; Doris table shop_<table>)
	op    string // c, u, d
	id    int64
	name  string
	n     int64
	note  string // "" before the schema change
	v2    bool   // the value schema after the change (note added)
}

// stream is the events of table t: creates, updates, the schema change
// (v2 adds the nullable note), a delete (or, without deletes, an update)
// and a last update.
func stream(t string, c combo) []event {
	v2 := c.format != "csv" // csv has no field names: no schema change
	del := event{table: t, op: "u", id: 3, name: t + "3", n: 13, note: "x3", v2: v2}
	if c.deletes != "none" {
		del = event{table: t, op: "d", id: 3, name: t + "3", n: 3, v2: false}
	}
	evs := []event{
		{table: t, op: "c", id: 1, name: t + "1", n: 1},
		{table: t, op: "c", id: 2, name: t + "2", n: 2},
		{table: t, op: "c", id: 3, name: t + "3", n: 3},
		{table: t, op: "u", id: 1, name: t + "1", n: 11},
		{table: t, op: "u", id: 2, name: t + "2", n: 12, note: "x2", v2: v2},
		{table: t, op: "c", id: 4, name: t + "4", n: 4, note: "x4", v2: v2},
		del,
		{table: t, op: "u", id: 1, name: t + "1", n: 21, note: "x1", v2: v2},
	}
	if !v2 {
		for i := range evs {
			evs[i].note = ""
		}
	}
	return evs
}

// point is one run of the matrix.
type point struct {
	c      combo
	w      *world
	t      *testing.T
	db     string
	topics []string
	tables []string
	ids    map[string]int // schema ids: "v1", "v2"
}

// tableOf is the Doris table of source table t.
func tableOf(t string) string { return "shop_" + t }

func (p *point) setup() {
	p.t.Helper()
	if err := p.w.srv.CreateDatabase(p.db); err != nil {
		p.t.Fatal(err)
	}
	for _, tbl := range p.tables {
		ddl := "CREATE TABLE " + tbl + " (id BIGINT, name VARCHAR(32), n BIGINT, deleted BOOLEAN) UNIQUE KEY(id) " +
			`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
		if err := p.w.srv.CreateTable(p.db, ddl); err != nil {
			p.t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := p.w.adm.CreateTopics(ctx, 1, 1, nil, p.topics...); err != nil {
		p.t.Fatal(err)
	}
	if registry(p.c.format) {
		p.ids = map[string]int{}
		for _, v := range []string{"v1", "v2"} {
			st := sr.TypeAvro
			switch p.c.format {
			case "protobuf":
				st = sr.TypeProtobuf
			case "json_schema":
				st = sr.TypeJSON
			}
			id, err := p.w.reg.Registry().Register(p.db+"-"+v, sr.Schema{Schema: p.schema(v == "v2"), Type: st})
			if err != nil {
				p.t.Fatal(err)
			}
			p.ids[v] = id
		}
	}
}

// schema is the registry schema text of the point's format, v2 with the
// note field.
func (p *point) schema(v2 bool) string {
	tf := p.c.routing == "table_field"
	dbz := p.c.envelope == "debezium"
	switch p.c.format {
	case "json_schema":
		return fmt.Sprintf(`{"type":"object","title":"v2=%v"}`, v2)
	case "protobuf":
		note, tbl := "", ""
		if v2 {
			note = "optional string note = 4;"
		}
		if tf {
			tbl = "string tbl = 5;"
		}
		if dbz {
			return `syntax = "proto3"; package m; message Envelope { Value before = 1; Value after = 2; Source source = 3; string op = 4; ` + tbl +
				` } message Value { int64 id = 1; string name = 2; int64 n = 3; ` + note + ` } message Source { string db = 1; string table = 2; }`
		}
		return `syntax = "proto3"; package m; message Row { int64 id = 1; string name = 2; int64 n = 3; ` + note + " " + tbl + ` }`
	}
	val := `{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"n","type":"long"}`
	if v2 {
		val += `,{"name":"note","type":["null","string"],"default":null}`
	}
	tbl := ""
	if tf {
		tbl = `,{"name":"tbl","type":"string"}`
	}
	if dbz {
		return `{"type":"record","name":"Envelope","namespace":"m","fields":[` +
			`{"name":"before","type":["null",{"type":"record","name":"Value","fields":[` + val + `]}],"default":null},` +
			`{"name":"after","type":["null","Value"],"default":null},` +
			`{"name":"source","type":{"type":"record","name":"Source","fields":[{"name":"db","type":"string"},{"name":"table","type":"string"}]}},` +
			`{"name":"op","type":"string"}` + tbl + `]}`
	}
	return `{"type":"record","name":"Row","namespace":"m","fields":[` + val + tbl + `]}`
}

// rowJSON is e's row image as JSON.
func (p *point) rowJSON(e event) map[string]any {
	m := map[string]any{"id": e.id, "name": e.name, "n": e.n}
	if e.note != "" {
		m["note"] = e.note
	}
	if p.c.deletes == "field" {
		m["deleted"] = e.op == "d"
	}
	return m
}

// value is e's record value in the point's format (nil: none, e.g. the
// tombstone after a delete).
func (p *point) value(e event) []byte {
	tbl := tableOf(e.table)
	var doc map[string]any
	if p.c.debeziumEvents() {
		img := p.rowJSON(e)
		doc = map[string]any{"op": e.op, "source": map[string]any{"db": "shop", "table": e.table}, "before": nil, "after": img}
		if e.op == "d" {
			doc["before"], doc["after"] = img, nil
		}
	} else {
		doc = p.rowJSON(e)
	}
	if p.c.routing == "table_field" {
		doc["tbl"] = tbl
	}
	switch p.c.format {
	case "csv":
		return fmt.Appendf(nil, "%d\t%s\t%d\t0", e.id, e.name, e.n) // Stream Load csv: tab-separated by default
	case "json", "debezium":
		b, _ := json.Marshal(doc)
		return b
	}
	id := p.ids["v1"]
	if e.v2 {
		id = p.ids["v2"]
	}
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	switch p.c.format {
	case "json_schema":
		j, _ := json.Marshal(doc)
		return append(b, j...)
	case "protobuf":
		return p.protoValue(append(b, 0), e, tbl)
	}
	return p.avroValue(b, e, tbl)
}

func avroString(b []byte, s string) []byte {
	return append(binary.AppendVarint(b, int64(len(s))), s...)
}

func (p *point) avroImage(b []byte, e event) []byte {
	b = binary.AppendVarint(b, e.id)
	b = avroString(b, e.name)
	b = binary.AppendVarint(b, e.n)
	if e.v2 {
		if e.note == "" {
			b = binary.AppendVarint(b, 0)
		} else {
			b = avroString(binary.AppendVarint(b, 1), e.note)
		}
	}
	return b
}

// avroValue is the Avro binary encoding of schema()'s record.
func (p *point) avroValue(b []byte, e event, tbl string) []byte {
	if p.c.envelope == "debezium" {
		if e.op == "d" {
			b = p.avroImage(binary.AppendVarint(b, 1), e) // before
			b = binary.AppendVarint(b, 0)                 // after null
		} else {
			b = binary.AppendVarint(b, 0)
			b = p.avroImage(binary.AppendVarint(b, 1), e)
		}
		b = avroString(avroString(b, "shop"), e.table)
		b = avroString(b, e.op)
	} else {
		b = p.avroImage(b, e)
	}
	if p.c.routing == "table_field" {
		b = avroString(b, tbl)
	}
	return b
}

func (p *point) protoImage(e event) []byte {
	var b []byte
	b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), uint64(e.id))
	b = protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), e.name)
	b = protowire.AppendVarint(protowire.AppendTag(b, 3, protowire.VarintType), uint64(e.n))
	if e.v2 && e.note != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 4, protowire.BytesType), e.note)
	}
	return b
}

// protoValue is the Protobuf encoding of schema()'s first message.
func (p *point) protoValue(b []byte, e event, tbl string) []byte {
	if p.c.envelope == "debezium" {
		field := protowire.Number(2)
		if e.op == "d" {
			field = 1
		}
		b = protowire.AppendBytes(protowire.AppendTag(b, field, protowire.BytesType), p.protoImage(e))
		var src []byte
		src = protowire.AppendString(protowire.AppendTag(src, 1, protowire.BytesType), "shop")
		src = protowire.AppendString(protowire.AppendTag(src, 2, protowire.BytesType), e.table)
		b = protowire.AppendBytes(protowire.AppendTag(b, 3, protowire.BytesType), src)
		b = protowire.AppendString(protowire.AppendTag(b, 4, protowire.BytesType), e.op)
	} else {
		b = append(b, p.protoImage(e)...)
	}
	if p.c.routing == "table_field" {
		b = protowire.AppendString(protowire.AppendTag(b, 5, protowire.BytesType), tbl)
	}
	return b
}

// records are the point's Kafka records: each table's stream, the two
// tables interleaved in one topic or in a topic each.
func (p *point) records() []*kgo.Record {
	var streams [][]event
	for _, t := range []string{"a", "b"}[:len(p.tables)] {
		streams = append(streams, stream(t, p.c))
	}
	var out []*kgo.Record
	for i := range streams[0] {
		for k, s := range streams {
			e := s[i]
			topic := p.topics[0]
			if len(p.topics) > 1 {
				topic = p.topics[k]
			}
			key := fmt.Appendf(nil, `{"id":%d}`, e.id)
			r := &kgo.Record{Topic: topic, Key: key, Value: p.value(e)}
			if p.c.routing == "table_header" {
				r.Headers = []kgo.RecordHeader{{Key: "tbl", Value: []byte(tableOf(e.table))}}
			}
			out = append(out, r)
			if e.op == "d" && p.c.debeziumEvents() {
				out = append(out, &kgo.Record{Topic: topic, Key: key, Headers: r.Headers}) // the tombstone
			}
		}
	}
	return out
}

// want is each table's final rows, "id name n [note]" by id.
func (p *point) want() map[string]map[int64]string {
	out := map[string]map[int64]string{}
	for _, t := range []string{"a", "b"}[:len(p.tables)] {
		rows := map[int64]string{}
		for _, e := range stream(t, p.c) {
			if e.op == "d" {
				delete(rows, e.id)
				continue
			}
			s := fmt.Sprintf("%d %s %d", e.id, e.name, e.n)
			if p.c.evolve {
				note := e.note
				if note == "" {
					note = "<nil>"
				}
				s += " " + note
			}
			rows[e.id] = s
		}
		out[tableOf(t)] = rows
	}
	return out
}

// got is each table's rows as want has them.
func (p *point) got() map[string]map[int64]string {
	p.t.Helper()
	out := map[string]map[int64]string{}
	for _, tbl := range p.tables {
		sch, err := p.w.srv.Schema(p.db, tbl)
		if err != nil {
			p.t.Fatal(err)
		}
		col := map[string]int{}
		for i, c := range sch.Columns {
			col[c.Name] = i
		}
		rows, err := p.w.srv.Rows(p.db, tbl)
		if err != nil {
			p.t.Fatal(err)
		}
		got := map[int64]string{}
		for _, r := range rows {
			s := fmt.Sprintf("%v %v %v", r[col["id"]], r[col["name"]], r[col["n"]])
			if p.c.evolve {
				i, ok := col["note"]
				if !ok {
					s += " <no note column>"
				} else {
					s += fmt.Sprintf(" %v", r[i])
				}
			}
			id, _ := r[col["id"]].(int64)
			if _, dup := got[id]; dup {
				s += " (twice)"
			}
			got[id] = s
		}
		out[tbl] = got
	}
	return out
}

// crashPoints are the EOS cut points the points crash at, by turns.
var crashPoints = []string{loader.FailMidStream, loader.FailAfterPrecommit, loader.FailBeforeDecide, loader.FailAfterDecide}

// runJob builds cfg's job as run does and runs it; it drains once every
// one of total offsets was consumed.
func (p *point) runJob(cfg *config.Config, fp *loader.Failpoints, total int64) error {
	var conn *kafka.Connector
	var drained atomic.Bool
	knobs := &kafka.TestingKnobs{AfterPoll: func(pos kafka.Position) {
		var n int64
		for _, o := range pos.Offsets {
			n += o
		}
		for _, offs := range pos.Topics {
			for _, o := range offs {
				n += o
			}
		}
		if n >= total && drained.CompareAndSwap(false, true) {
			conn.Drain()
		}
	}}
	if fp != nil {
		fp.OnCrash(func(string) {})
	}
	job, err := run.Build(cfg, run.Deps{Doris: p.w.client, Failpoints: fp, Logger: slog.New(slog.DiscardHandler),
		ConnectorOpts: []kafka.Opt{kafka.WithTestingKnobs(knobs), kafka.WithKgoOpts(kgo.FetchMaxWait(20 * time.Millisecond))}})
	if err != nil {
		return err
	}
	conn = job.Connector
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return conn.Run(ctx)
}

// exercise loads the point's stream through one crash and checks it.
func (p *point) exercise(crashAt string) {
	t := p.t
	p.setup()
	recs := p.records()
	if err := p.w.kcProduce(recs); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("job: {name: %s, data_dir: %s}\ndoris: {fe: [%s], mysql: %s, user: root, database: %s, table: %s, properties: {max_filter_ratio: \"0\"}}\nmetrics: {listen: \"\"}\n",
		p.db, t.TempDir(), p.w.srv.FEURL(), p.w.srv.MySQLAddr(), p.db, p.tables[0])
	y := strings.ReplaceAll(p.c.yaml(base, strings.Join(p.w.kc.ListenAddrs(), ", "), p.topics), "REGISTRY", p.w.reg.URL())
	cfg, err := loadYAML(t, t.TempDir(), y)
	if err != nil {
		t.Fatalf("config:\n%s\n%v", y, err)
	}
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(crashAt, loader.Crash().Skip(1).Times(1)); err != nil {
		t.Fatal(err)
	}
	total := int64(len(recs))
	if err := p.runJob(cfg, fp, total); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("first run: %v, want a crash at %s", err, crashAt)
	}
	if err := p.runJob(cfg, nil, total); err != nil {
		t.Fatalf("run after the crash at %s: %v", crashAt, err)
	}
	got, want := p.got(), p.want()
	for tbl, rows := range want {
		if g := fmt.Sprint(got[tbl]); g != fmt.Sprint(rows) {
			t.Errorf("table %s rows by id:\n got  %s\n want %s", tbl, g, fmt.Sprint(rows))
		}
	}
	rep, err := verify.VerifyConfig(context.Background(), &cmdutil.Factory{Now: time.Now}, cfg, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if code := cmdutil.ExitCode(rep.Err()); code != 0 {
		t.Errorf("verify exit %d: %v", code, rep.Findings)
	}
	txns, err := p.w.srv.Txns(p.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txns {
		if tx.Status == "PREPARE" || tx.Status == "PRECOMMITTED" {
			t.Errorf("txn %d (%s) lingers %s", tx.ID, tx.Label, tx.Status)
		}
	}
}

func (w *world) kcProduce(recs []*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.kc.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(context.Background(), recs...).FirstErr()
}

// TestMatrixRuns loads a pairwise covering subset of the supported points
// (every pair of dimension values some supported point has is in one run;
// the case first) end to end: each through one schema change and
// one crash at a failpoint (EOS: by turns mid-stream, after-precommit,
// before-decide, after-decide; at-least-once: mid-stream, where no load
// was acknowledged, so a restart loads nothing twice), then rows per key,
// verify exit 0 and no lingering txn.
func TestMatrixRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	points := pairwise(supported(), doneWhen)
	t.Logf("%d points (pairwise of %d supported)", len(points), len(supported()))
	// The points wait on Kafka polls and Doris round trips far more than
	// they compute: several run at once, beyond -parallel (t.Run may be
	// called from several goroutines).
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, c := range points {
		crashAt := crashPoints[i%len(crashPoints)]
		if c.alo {
			crashAt = loader.FailMidStream
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t.Run(fmt.Sprintf("%02d-%s@%s", i, c, crashAt), func(t *testing.T) { runPoint(t, w, i, c, crashAt) })
		})
	}
}

// runPoint is point i of TestMatrixRuns.
func runPoint(t *testing.T, w *world, i int, c combo, crashAt string) {
	p := &point{c: c, w: w, t: t, db: fmt.Sprintf("m%d", i)}
	p.tables = []string{tableOf("a")}
	if c.routing != "none" {
		p.tables = append(p.tables, tableOf("b"))
	}
	switch c.routing {
	case "none", "table_field", "table_header":
		p.topics = []string{p.db + ".src.a"}
	default:
		p.topics = []string{p.db + ".src.a", p.db + ".src.b"}
	}
	p.exercise(crashAt)
}
