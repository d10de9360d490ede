package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
)

// secondTopic is the other source topic of the several-topic tests.
const secondTopic = "orders2"

// createTopic creates topic with partitions partitions.
func (e *env) createTopic(topic string, partitions int32) {
	e.t.Helper()
	if _, err := e.adm.CreateTopic(context.Background(), partitions, 1, nil, topic); err != nil {
		e.t.Fatal(err)
	}
}

// produceIDsTo writes ids [from, to) as JSON rows to topic, id i to
// partition i % partitions.
func (e *env) produceIDsTo(topic string, from, to int, partitions int32) {
	e.t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions,
			Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	e.produce(recs...)
}

// ends returns the end offsets of topics as one Position.
func (e *env) ends(topics ...string) Position {
	e.t.Helper()
	m := map[string]map[int32]int64{}
	for _, t := range topics {
		m[t] = e.end(t).Offsets
	}
	return PositionOf(m)
}

// runUntil runs c until it consumed everything up to want, then drains
// it; it returns Run's error.
func runUntil(ctx context.Context, c *Connector, want Position) error {
	c.knobs.AfterPoll = chain(c.knobs.AfterPoll, func(p Position) {
		if covers(p, want) {
			c.Drain()
		}
	})
	return c.Run(ctx)
}

// tableIDs returns how many rows of table hold each id.
func (e *env) tableIDs(table string) map[int64]int {
	e.t.Helper()
	rows, err := e.srv.Rows(testDB, table)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64]int{}
	for _, r := range rows {
		out[r[0].(int64)]++
	}
	return out
}

// checkTable asserts table holds ids [from, to), each exactly once, and
// nothing else.
func (e *env) checkTable(table string, from, to int) {
	e.t.Helper()
	got := e.tableIDs(table)
	var bad []string
	for i := from; i < to; i++ {
		if got[int64(i)] != 1 {
			bad = append(bad, fmt.Sprintf("id %d ×%d", i, got[int64(i)]))
		}
		delete(got, int64(i))
	}
	for id, k := range got {
		bad = append(bad, fmt.Sprintf("unexpected id %d ×%d", id, k))
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		e.t.Fatalf("table %s is not exactly ids [%d,%d): %v", table, from, to, bad)
	}
}

// twoTopicConfig reads testTopic and secondTopic, routed to tables ra and
// rb.
func (e *env) twoTopicConfig() Config {
	cfg := e.config()
	cfg.Topic, cfg.Topics = "", []string{testTopic, secondTopic}
	cfg.Routing = Routing{TopicTables: map[string]string{testTopic: "ra", secondTopic: "rb"}}
	return cfg
}

// Two topics into two tables, exactly once, through a crash at the
// barrier (before the decision) and one right after the decision: the
// restart resumes both topics from the recorded topic-qualified position.
func TestTwoTopicsTwoTablesCrash(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailBeforeDecide, loader.FailAfterDecide} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 2)
			e.createRoutedTables()
			e.createTopic(secondTopic, 3)
			const n = 40
			e.produceIDs(0, n, 2)
			e.produceIDsTo(secondTopic, 1000, 1000+n, 3)
			want := e.ends(testTopic, secondTopic)
			fps := loader.NewFailpoints()
			var h *loader.Handle
			decided := 0
			c := e.connector(e.twoTopicConfig(), fps, WithOnCheckpoint(func(s CheckpointStats) {
				if s.Err == nil {
					if decided++; decided == 3 {
						var err error
						if h, err = fps.Arm(fp, loader.Crash()); err != nil {
							t.Error(err)
						}
					}
				}
			}))
			if err := runUntil(ctxFor(t), c, want); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("Run: %v, want a crash at %s", err, fp)
			}
			if h == nil || h.Hits() != 1 {
				t.Fatalf("failpoint %s not hit", fp)
			}
			var starts []Position
			c2 := e.connector(e.twoTopicConfig(), nil, WithTestingKnobs(&TestingKnobs{
				AfterStart: func(p Position) { starts = append(starts, p) }}))
			if err := runUntil(ctxFor(t), c2, want); err != nil {
				t.Fatalf("Run after restart: %v", err)
			}
			if len(starts) != 1 || len(starts[0].Topics) != 2 {
				t.Fatalf("restart began at %v, want a position of both topics", starts)
			}
			e.checkTable("ra", 0, n)
			e.checkTable("rb", 1000, 1000+n)
			e.checkNoRunningTxn()
			pos, ok := c2.Decided()
			if !ok || !covers(pos, want) || pos.Topic != "" {
				t.Fatalf("decided %v, want the topic-qualified end %v", pos, want)
			}
		})
	}
}

// A topic matching kafka.topic_regex created while the job runs is
// assigned at a checkpoint boundary and read from its earliest offset:
// the records produced before it was found are loaded, each exactly once.
// Internal topics, the dead-letter topic and excluded topics never match.
func TestTopicRegexPicksUpNewTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx := ctxFor(t)
	clk := newManualClock()
	cfg := e.config()
	cfg.Topic, cfg.TopicRegex = "", "orders.*"
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce, cfg.ExcludeTopics = "orders-dlq", true, []string{"orders-state"}
	cfg.PartitionRefresh = time.Minute
	e.createTopic("orders-dlq", 1)
	e.createTopic("orders-state", 1)
	e.produceIDs(0, 14, 1) // two full checkpoints (cap 7): nothing open afterwards
	started, added, ack := make(chan Position, 1), make(chan []string, 4), make(chan struct{})
	c := e.connector(cfg, nil, WithClock(clk), WithTestingKnobs(&TestingKnobs{
		AfterStart: func(p Position) { started <- p },
		AfterTopicsAdded: func(ts []string) {
			added <- ts
			<-ack // the test sets the drain position before the new topic is read
		},
	}))
	want := make(chan Position, 1)
	c.knobs.AfterPoll = func(p Position) {
		select {
		case w := <-want:
			if !covers(p, w) {
				want <- w
				return
			}
			c.Drain()
		default:
		}
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	if p := <-started; !slices.Equal(p.TopicNames(), []string{testTopic}) {
		t.Fatalf("started at %v, want only %s (the dead-letter and excluded topics never match)", p, testTopic)
	}
	e.createTopic("orders-new", 2)
	e.produceIDsTo("orders-new", 100, 121, 2) // before it is found: read from earliest
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	select {
	case ts := <-added:
		if !slices.Equal(ts, []string{"orders-new"}) {
			t.Fatalf("added %v, want [orders-new]", ts)
		}
	case <-ctx.Done():
		t.Fatal("orders-new never added")
	}
	want <- e.ends(testTopic, "orders-new")
	close(ack)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := e.ids()
	for i := range 14 {
		if got[int64(i)] != 1 {
			t.Errorf("id %d ×%d, want once", i, got[int64(i)])
		}
	}
	for i := 100; i < 121; i++ {
		if got[int64(i)] != 1 {
			t.Errorf("id %d of the new topic ×%d, want once", i, got[int64(i)])
		}
	}
	if len(got) != 14+21 {
		t.Errorf("table holds %d ids, want %d", len(got), 14+21)
	}
	pos, _ := c.Decided()
	if !slices.Equal(pos.TopicNames(), []string{testTopic, "orders-new"}) {
		t.Fatalf("decided %v, want positions of orders-new and %s", pos, testTopic)
	}
}

// A store written by a one-topic job (kafka.topic) resumes unchanged after
// the job switches to kafka.topics naming the same topic: the old position
// is the one-topic form, which kafka.topics reads.
func TestOneTopicStoreResumesWithTopicsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 20, 2)
	c1 := e.connector(e.config(), nil)
	if err := e.runToEnd(ctx, c1); err != nil {
		t.Fatal(err)
	}
	last, _ := c1.Decided()
	e.produceIDs(20, 30, 2)
	cfg := e.config()
	cfg.Topic, cfg.Topics = "", []string{testTopic}
	var start Position
	c2 := e.connector(cfg, nil, WithTestingKnobs(&TestingKnobs{AfterStart: func(p Position) { start = p }}))
	if err := e.runToEnd(ctx, c2); err != nil {
		t.Fatalf("Run with kafka.topics: %v", err)
	}
	if start.String() != last.String() || start.Topic != testTopic {
		t.Fatalf("resumed at %v, want the one-topic position %v", start, last)
	}
	e.checkExactlyOnce(30)
}

// A recorded position naming a topic the configuration no longer selects
// stops the start with a *RemovedTopicError naming it; nothing is read.
func TestRemovedTopicRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.createRoutedTables()
	e.createTopic(secondTopic, 1)
	ctx := ctxFor(t)
	e.produceIDs(0, 7, 1)
	e.produceIDsTo(secondTopic, 100, 107, 1)
	if err := runUntil(ctx, e.connector(e.twoTopicConfig(), nil), e.ends(testTopic, secondTopic)); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []func(*Config){
		func(c *Config) { c.Topics = []string{testTopic} },
		func(c *Config) { c.Topics, c.Topic = nil, testTopic },
		func(c *Config) { c.Topics, c.TopicRegex = nil, "orders" },
	} {
		c := e.twoTopicConfig()
		cfg(&c)
		err := e.connector(c, nil).Run(ctx)
		var re *RemovedTopicError
		if !errors.As(err, &re) || re.Topic != secondTopic || !strings.Contains(err.Error(), secondTopic) {
			t.Fatalf("Run = %v, want a *RemovedTopicError naming %s", err, secondTopic)
		}
	}
	e.checkTable("ra", 0, 7)
}

// kafka.topic, kafka.topics and kafka.topic_regex exclude each other;
// kafka.start: offsets needs one topic; the regex must compile.
func TestTopicsConfigRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Config{
		"topic and topics":   {Topic: "a", Topics: []string{"b"}},
		"topics and regex":   {Topics: []string{"a"}, TopicRegex: "b.*"},
		"none":               {},
		"duplicate":          {Topics: []string{"a", "a"}},
		"empty entry":        {Topics: []string{"a", ""}},
		"dead letter listed": {Topics: []string{"a", "dlq"}, DeadLetterTopic: "dlq"},
		"bad regex":          {TopicRegex: "a("},
		"offsets, 2 topics":  {Topics: []string{"a", "b"}, Start: StartOffsets, StartOffsets: map[int32]int64{0: 1}},
		"offsets, regex":     {TopicRegex: "a.*", Start: StartOffsets, StartOffsets: map[int32]int64{0: 1}},
	} {
		c.Brokers = []string{"b:1"}
		if _, err := New(c, nopSink{}); err == nil {
			t.Errorf("%s: New accepted %+v", name, c)
		}
	}
	if _, err := New(Config{Brokers: []string{"b:1"}, Topics: []string{"a", "b"}}, nopSink{}); err != nil {
		t.Errorf("kafka.topics [a b]: %v", err)
	}
}

// The regex is anchored: it matches whole names only; internal and
// excluded topics never match.
func TestTopicRegexSelects(t *testing.T) {
	t.Parallel()
	c, err := New(Config{Brokers: []string{"b:1"}, TopicRegex: "db\\.inv\\..*", DeadLetterTopic: "db.inv.dlq", DeadLetterAtLeastOnce: true,
		ExcludeTopics: []string{"db.inv.state"}}, nopSink{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.adminCl.Close()
	for topic, want := range map[string]bool{"db.inv.orders": true, "xdb.inv.orders": false, "db.inv": false,
		"db.inv.dlq": false, "db.inv.state": false, "__db.inv.x": false} {
		if got := c.selects(topic); got != want {
			t.Errorf("selects(%q) = %v, want %v", topic, got, want)
		}
	}
}

// Positions: the one-topic form is unchanged, several topics use
// "topics", a "topics" form of one topic reads as the one-topic form, and
// both keys at once are refused.
func TestPositionForms(t *testing.T) {
	t.Parallel()
	one := `{"topic":"orders","offsets":{"0":5,"1":7}}`
	p, ok, err := ParsePosition([]byte(one))
	if err != nil || !ok || p.Topic != "orders" || p.Of("orders")[1] != 7 || p.String() != one {
		t.Fatalf("one-topic position: %v %v %v", p, ok, err)
	}
	two := `{"topics":{"a":{"0":1},"b":{"0":2,"3":4}}}`
	p, _, err = ParsePosition([]byte(two))
	if err != nil || p.Topic != "" || p.Of("b")[3] != 4 || p.String() != two ||
		!slices.Equal(p.TopicNames(), []string{"a", "b"}) {
		t.Fatalf("two-topic position: %v %v", p, err)
	}
	if PositionOf(map[string]map[int32]int64{"a": {0: 1}, "b": {0: 2, 3: 4}}).String() != two {
		t.Fatal("PositionOf does not encode as the topics form")
	}
	p, _, err = ParsePosition([]byte(`{"topics":{"orders":{"0":5,"1":7}}}`))
	if err != nil || p.String() != one {
		t.Fatalf("a topics form of one topic = %v %v, want %s", p, err, one)
	}
	for _, bad := range []string{`{"topic":"a","offsets":{"0":1},"topics":{"b":{"0":1}}}`, `{"topics":{"a":{"x":1}}}`,
		`{"topics":{"a":{"0":-1}}}`, `{"topics":{"":{"0":1}}}`} {
		if _, _, err := ParsePosition([]byte(bad)); err == nil {
			t.Errorf("ParsePosition(%s) accepted it", bad)
		}
	}
	if got := PositionOf(nil).String(); got != `{"topics":{}}` {
		t.Errorf("empty position = %s", got)
	}
}

// A topic found while a checkpoint is open is not assigned until that
// checkpoint is decided: the look for new topics waits for the boundary.
func TestTopicRegexWaitsForCheckpointBoundary(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx := ctxFor(t)
	clk := newManualClock()
	cfg := e.config()
	cfg.Topic, cfg.TopicRegex = "", "orders|late"
	cfg.PartitionRefresh = time.Minute
	e.produceIDs(0, 10, 1) // one checkpoint of 7, then 3 open
	type seen struct {
		pending int64
		decided int
		topics  []string
	}
	read10, added, ack := make(chan struct{}), make(chan seen, 1), make(chan struct{})
	var once sync.Once
	var want atomic.Pointer[Position]
	decided := 0
	var c *Connector
	c = e.connector(cfg, nil, WithClock(clk), WithOnCheckpoint(func(s CheckpointStats) {
		if s.Err == nil {
			decided++
		}
	}), WithTestingKnobs(&TestingKnobs{
		AfterPoll: func(p Position) {
			if p.Of(testTopic)[0] >= 10 {
				once.Do(func() { close(read10) })
			}
			if w := want.Load(); w != nil && covers(p, *w) {
				c.Drain()
			}
		},
		AfterTopicsAdded: func(ts []string) {
			added <- seen{c.pend.records, decided, ts}
			<-ack // the test sets the drain position before the new topic is read
		},
	}))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-read10
	e.createTopic("late", 1)
	e.produceIDsTo("late", 500, 503, 1)
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	e.produceIDs(10, 14, 1) // completes the open checkpoint (cap 7)
	var s seen
	select {
	case s = <-added:
	case <-ctx.Done():
		t.Fatal("late never added")
	}
	if s.pending != 0 || s.decided != 2 || !slices.Equal(s.topics, []string{"late"}) {
		t.Fatalf("added %v with %d records pending after %d decisions, want late at the boundary after decision 2",
			s.topics, s.pending, s.decided)
	}
	w := e.ends(testTopic, "late")
	want.Store(&w)
	close(ack)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := e.ids()
	for _, id := range []int64{0, 9, 13, 500, 502} {
		if got[id] != 1 {
			t.Errorf("id %d ×%d, want once", id, got[id])
		}
	}
	if len(got) != 17 {
		t.Errorf("%d ids loaded, want 17", len(got))
	}
}

// A kafka.topic_regex matching nothing at the start reads nothing (the
// position names no topic) until a matching topic is created.
func TestTopicRegexMatchingNothingYet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx := ctxFor(t)
	clk := newManualClock()
	cfg := e.config()
	cfg.Topic, cfg.TopicRegex = "", "later.*"
	cfg.PartitionRefresh = time.Minute
	e.produceIDs(0, 5, 1) // on orders: never read
	started, added, ack := make(chan Position, 1), make(chan []string, 1), make(chan struct{})
	var want atomic.Pointer[Position]
	var c *Connector
	c = e.connector(cfg, nil, WithClock(clk), WithTestingKnobs(&TestingKnobs{
		AfterStart: func(p Position) { started <- p },
		AfterTopicsAdded: func(ts []string) {
			added <- ts
			<-ack
		},
		AfterPoll: func(p Position) {
			if w := want.Load(); w != nil && covers(p, *w) {
				c.Drain()
			}
		},
	}))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	if p := <-started; len(p.TopicNames()) != 0 || p.String() != `{"topics":{}}` {
		t.Fatalf("started at %v, want a position of no topic", p)
	}
	e.createTopic("later1", 1)
	e.produceIDsTo("later1", 300, 304, 1)
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if ts := <-added; !slices.Equal(ts, []string{"later1"}) {
		t.Fatalf("added %v, want [later1]", ts)
	}
	w := e.ends("later1")
	want.Store(&w)
	close(ack)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := e.ids()
	if len(got) != 4 || got[300] != 1 || got[303] != 1 {
		t.Fatalf("loaded %v, want ids 300..303 once (nothing of orders)", got)
	}
	if pos, _ := c.Decided(); pos.Topic != "later1" {
		t.Fatalf("decided %v, want the one-topic position of later1", pos)
	}
}

// A row bisection found refused is named by its topic too: the record at
// the same partition and offset of another source topic is not taken for
// it.
func TestRefusedRowIsTopicQualified(t *testing.T) {
	t.Parallel()
	c := &Connector{refused: map[recKey]string{{topic: "a", p: 0, off: 5}: "bad"}}
	if _, ok := c.refusedRow(&kgo.Record{Topic: "b", Partition: 0, Offset: 5}); ok {
		t.Fatal("b/0@5 taken for the refused row a/0@5")
	}
	if why, ok := c.refusedRow(&kgo.Record{Topic: "a", Partition: 0, Offset: 5}); !ok || why != "bad" {
		t.Fatalf("a/0@5 = %q %v, want the refused row", why, ok)
	}
}
