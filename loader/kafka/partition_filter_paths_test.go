package kafka

import (
	"maps"
	"slices"
	"testing"

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
// the persisted first start (a StartStore position naming every partition)
// and the rewind after a failed checkpoint (Doris fails two precommits).
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
		stored string          // a persisted first start
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
			stored: `{"topic":"orders","offsets":{"0":2,"1":3,"2":4,"3":6}}`},
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
			if c.stored != "" {
				opts = append(opts, WithStartStore(&memStartStore{raw: []byte(c.stored)}))
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
