package kafka

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/doris-sink/doris-sink/doris/doristest"
)

// oddSlot is the partition filter of the tests below: writer slot 1 of 2
// owning the odd partitions of testTopic (and of any other topic).
func oddSlot(_ string, p int32) bool { return p%2 == 1 }

// Issue 12: a partition filter (group mode: one writer slot's partitions)
// holds on every start path, not only kafka.start earliest
// (TestPartitionFilter): kafka.start latest, committed and explicit
// offsets (an offset of another slot's partition is skipped, not refused),
// the persisted first start (a StartStore position naming every partition;
// a first start the slot persists names only its partitions) and the rewind after a failed checkpoint (Doris fails two precommits).
// In each, the start position and every decided position name exactly the
// slot's partitions, and the table holds exactly the slot's records from
// the start on, each once.
func TestPartitionFilterStartPaths(t *testing.T) {
	t.Parallel()
	const parts = 4
	type tc struct {
		name   string
		start  map[int32]int64 // the expected start of partitions 1 and 3
		mut    func(*Config)
		commit map[int32]int64 // group offsets committed before the start
		stored string          // a persisted first start ("": none)
		store  bool            // with a StartStore
		saved  string          // what the StartStore holds after the run
		fault  bool            // Doris fails two precommits: the Connector rewinds
	}
	for _, c := range []tc{
		{name: "latest", start: map[int32]int64{1: 10, 3: 10}, mut: func(c *Config) { c.Start = StartLatest }},
		{name: "committed", start: map[int32]int64{1: 4, 3: 6}, mut: func(c *Config) { c.Start = StartCommitted },
			commit: map[int32]int64{0: 2, 1: 4, 2: 3, 3: 6}},
		{name: "offsets", start: map[int32]int64{1: 7, 3: 0}, mut: func(c *Config) {
			c.Start, c.StartOffsets = StartOffsets, map[int32]int64{0: 3, 1: 7, 2: 5}
		}},
		{name: "persisted", start: map[int32]int64{1: 3, 3: 6}, mut: func(c *Config) { c.Start = StartLatest },
			store: true, stored: `{"topic":"orders","offsets":{"0":2,"1":3,"2":4,"3":6}}`,
			saved: `{"topic":"orders","offsets":{"0":2,"1":3,"2":4,"3":6}}`},
		{name: "persist", start: map[int32]int64{1: 10, 3: 10}, mut: func(c *Config) { c.Start = StartLatest },
			store: true, saved: `{"topic":"orders","offsets":{"1":10,"3":10}}`},
		{name: "rewind", start: map[int32]int64{1: 0, 3: 0}, mut: func(c *Config) { c.Start = StartEarliest }, fault: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, parts)
			ctx := ctxFor(t)
			e.produceIDs(0, 40, parts) // 10 per partition: id i at offset i/4 of partition i%4
			cfg := e.config()
			c.mut(&cfg)
			if c.commit != nil {
				var offs kadm.Offsets
				for p, o := range c.commit {
					offs.Add(kadm.Offset{Topic: testTopic, Partition: p, At: o, LeaderEpoch: -1})
				}
				if _, err := e.adm.CommitOffsets(ctx, cfg.Group, offs); err != nil {
					t.Fatal(err)
				}
			}
			var fh *doristest.FaultHandle
			if c.fault {
				var err error
				fh, err = e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Count: 2,
					Err: &doristest.FaultErr{Message: "injected precommit failure"}})
				if err != nil {
					t.Fatal(err)
				}
			}
			var starts, rewinds []Position
			var rec recorder
			opts := []Opt{WithPartitionFilter(oddSlot), WithOnCheckpoint(rec.add), WithTestingKnobs(&TestingKnobs{
				AfterStart:  func(p Position) { starts = append(starts, p); e.produceIDs(40, 48, parts) },
				AfterRewind: func(p Position) { rewinds = append(rewinds, p) },
			})}
			ss := &memStartStore{}
			if c.stored != "" {
				ss.raw = []byte(c.stored)
			}
			if c.store {
				opts = append(opts, WithStartStore(ss))
			}
			conn := e.connector(cfg, nil, opts...)
			want := Position{Topic: testTopic, Offsets: map[int32]int64{1: 12, 3: 12}}
			conn.knobs.AfterPoll = func(p Position) {
				if covers(p, want) {
					conn.Drain()
				}
			}
			if err := conn.Run(ctx); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(starts) != 1 || !maps.Equal(starts[0].Of(testTopic), c.start) {
				t.Fatalf("start %v, want exactly partitions 1 and 3 at %v", starts, c.start)
			}
			if got := string(ss.raw); got != c.saved {
				t.Errorf("StartStore holds %q, want %q (a slot persists only its own partitions' first start)", got, c.saved)
			}
			if c.fault && (fh.Hits() != 2 || len(rewinds) != 2) {
				t.Fatalf("fault hits %d, rewinds %d; want 2 and 2", fh.Hits(), len(rewinds))
			}
			for _, p := range rewinds {
				if got := slices.Sorted(maps.Keys(p.Of(testTopic))); !slices.Equal(got, []int32{1, 3}) {
					t.Errorf("rewound to %s, want exactly partitions 1 and 3", p.String())
				}
			}
			for _, s := range rec.stats() {
				if got := slices.Sorted(maps.Keys(s.End.Of(testTopic))); !slices.Equal(got, []int32{1, 3}) {
					t.Errorf("checkpoint end %s, want exactly partitions 1 and 3", s.End.String())
				}
			}
			if pos, ok := conn.Decided(); !ok || !maps.Equal(pos.Of(testTopic), want.Offsets) {
				t.Errorf("decided %s (%v), want exactly %s", pos.String(), ok, want.String())
			}
			wantIDs := map[int64]int{}
			for i := range 48 {
				p, off := int32(i%parts), int64(i/parts)
				if oddSlot(testTopic, p) && off >= c.start[p] {
					wantIDs[int64(i)] = 1
				}
			}
			if got := e.ids(); mustJSON(t, got) != mustJSON(t, wantIDs) {
				t.Errorf("rows %v,\nwant %v (slot 1's records from its start, once)", got, wantIDs)
			}
		})
	}
}

// Issue 12: topics kafka.topic_regex finds later are filtered too: of a
// new two-partition topic only the slot's partition 1 is assigned (from
// its earliest offset), and a new one-partition topic, none of whose
// partitions the slot owns, is assigned empty: not read, not an error.
// No decided position names another slot's partition.
func TestPartitionFilterRegexTopicFoundLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	clk := newManualClock()
	cfg := e.config()
	cfg.Topic, cfg.TopicRegex = "", "orders.*"
	cfg.PartitionRefresh = time.Minute
	e.produceIDs(0, 14, 2) // slot 1 reads the 7 odd ids: one full checkpoint (cap 7), nothing open after
	started, added, ack := make(chan Position, 1), make(chan []string, 4), make(chan struct{})
	var rec recorder
	c := e.connector(cfg, nil, WithClock(clk), WithPartitionFilter(oddSlot), WithOnCheckpoint(rec.add),
		WithTestingKnobs(&TestingKnobs{
			AfterStart: func(p Position) { started <- p },
			AfterTopicsAdded: func(ts []string) {
				added <- ts
				<-ack
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
	if p := <-started; !maps.Equal(p.Of(testTopic), map[int32]int64{1: 0}) {
		t.Fatalf("started at %s, want only partition 1 of %s", p.String(), testTopic)
	}
	e.createTopic("orders-new", 2)
	e.createTopic("orders-one", 1)
	e.produceIDsTo("orders-new", 100, 121, 2)
	e.produceIDsTo("orders-one", 200, 205, 1)
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	select {
	case ts := <-added:
		if !slices.Equal(ts, []string{"orders-new", "orders-one"}) {
			t.Fatalf("added %v, want [orders-new orders-one]", ts)
		}
	case <-ctx.Done():
		t.Fatal("the new topics were never added")
	}
	end := e.ends("orders-new")
	want <- Position{Topics: map[string]map[int32]int64{testTopic: {1: 7}, "orders-new": {1: end.Of("orders-new")[1]}}}
	close(ack)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantIDs := map[int64]int{}
	for i := 1; i < 14; i += 2 {
		wantIDs[int64(i)] = 1
	}
	for i := 101; i < 121; i += 2 {
		wantIDs[int64(i)] = 1
	}
	if got := e.ids(); mustJSON(t, got) != mustJSON(t, wantIDs) {
		t.Errorf("rows %v,\nwant %v (only partition 1 of each topic, once)", got, wantIDs)
	}
	check := func(what string, p Position) {
		for _, topic := range p.TopicNames() {
			for part := range p.Of(topic) {
				if part != 1 {
					t.Errorf("%s %s names partition %d of %s, which the slot does not own", what, p.String(), part, topic)
				}
			}
		}
	}
	for _, s := range rec.stats() {
		check("checkpoint end", s.End)
	}
	pos, ok := c.Decided()
	if !ok || !maps.Equal(pos.Of("orders-new"), map[int32]int64{1: 10}) {
		t.Errorf("decided %s, want partition 1 of orders-new at 10", pos.String())
	}
	check("decided", pos)
}
