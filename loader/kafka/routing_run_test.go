package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// routedTables are the tables the routing run tests route to.
var routedTables = []string{"ra", "rb", "rc"}

func (e *env) createRoutedTables() {
	e.t.Helper()
	for _, tbl := range routedTables {
		ddl := "CREATE TABLE " + tbl + " (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
		if err := e.srv.CreateTable(testDB, ddl); err != nil {
			e.t.Fatal(err)
		}
	}
}

// produceRouted writes ids [0, n) naming their table in field "kind"
// (id i → routedTables[i%3]), except the ids in unrouted, which have no
// kind.
func (e *env) produceRouted(n int, unrouted ...int) {
	e.t.Helper()
	var recs []*kgo.Record
	for i := range n {
		v := fmt.Sprintf(`{"id":%d,"v":"v%d","kind":%q}`, i, i, routedTables[i%3])
		for _, u := range unrouted {
			if u == i {
				v = fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i, i)
			}
		}
		recs = append(recs, &kgo.Record{Partition: 0, Value: []byte(v)})
	}
	e.produce(recs...)
}

// checkRouted asserts each routed table holds exactly its ids of [0, n),
// once each, without the unrouted ones.
func (e *env) checkRouted(n int, unrouted ...int) {
	e.t.Helper()
	for k, tbl := range routedTables {
		rows, err := e.srv.Rows(testDB, tbl)
		if err != nil {
			e.t.Fatal(err)
		}
		got := map[int64]int{}
		for _, r := range rows {
			got[r[0].(int64)]++
		}
		for i := range n {
			want := 1
			if i%3 != k {
				want = 0
			}
			for _, u := range unrouted {
				if u == i {
					want = 0
				}
			}
			if got[int64(i)] != want {
				e.t.Errorf("table %s holds id %d %d times, want %d", tbl, i, got[int64(i)], want)
			}
		}
	}
	e.checkNoRunningTxn()
}

func (e *env) checkNoRunningTxn() {
	e.t.Helper()
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, tx := range txns {
		if tx.Status == "PREPARE" || tx.Status == "PRECOMMITTED" {
			e.t.Errorf("txn %d label %s lingers %s", tx.ID, tx.Label, tx.Status)
		}
	}
}

// routing.table_field sends each record of one topic to its own table,
// each exactly once through checkpoints of several tables; a record that
// routes nowhere goes to the dead-letter topic and is counted.
func TestRunRoutesByFieldAndDeadLettersUnrouted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.createRoutedTables()
	const n = 20
	e.produceRouted(n, 11)
	ctx := ctxFor(t)
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Routing = Routing{TableField: "kind"}
	cfg.DeadLetterTopic = "orders-dlq"
	cfg.DeadLetterAtLeastOnce = true // no coordinator store here: dead letters are produced as read
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkRouted(n, 11)
	if got := c.Metrics().DeadLettered.Load(); got != 1 {
		t.Fatalf("DeadLettered = %d, want 1", got)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.ConsumeTopics("orders-dlq"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx, 10)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || !strings.Contains(string(recs[0].Value), `"id":11`) {
		t.Fatalf("dead-letter topic holds %v, want record 11", recs)
	}
	for _, h := range recs[0].Headers {
		if h.Key == HeaderError && !strings.Contains(string(h.Value), "routes to no table") {
			t.Errorf("dead-letter error header %q does not say it is unrouted", h.Value)
		}
	}
}

// Without a dead-letter topic a record that routes nowhere stops the run
// with an error naming its topic-partition-offset; nothing of it is
// dropped (the records before it are loaded exactly once on restart).
func TestRunRefusesUnroutedRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.createRoutedTables()
	e.produceRouted(9, 4)
	ctx := ctxFor(t)
	cfg := e.config()
	cfg.Routing = Routing{TableField: "kind"}
	c := e.connector(cfg, nil)
	err := e.runToEnd(ctx, c)
	var re *RecordError
	if !errors.As(err, &re) || !errors.Is(err, ErrUnrouted) || re.Topic != testTopic || re.Partition != 0 || re.Offset != 4 {
		t.Fatalf("Run = %v, want a *RecordError for %s/0@4 wrapping ErrUnrouted", err, testTopic)
	}
	if !strings.Contains(err.Error(), testTopic+"/0@4") {
		t.Fatalf("error %q does not name the record", err)
	}
	e.checkNoRunningTxn()
}

// Routing needs a sink that loads several tables.
func TestRoutingNeedsTableSink(t *testing.T) {
	t.Parallel()
	cfg := Config{Brokers: []string{"b:1"}, Topic: "t", Routing: Routing{DefaultTable: "x"}}
	if _, err := New(cfg, singleTableSink{}); err == nil || !strings.Contains(err.Error(), "WriteTo") {
		t.Fatalf("New = %v, want a refusal naming WriteTo", err)
	}
}

// singleTableSink is a Sink without WriteTo.
type singleTableSink struct{ Sink }
