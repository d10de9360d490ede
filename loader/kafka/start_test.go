package kafka

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// TestFirstStartModes: with no decided position, kafka.start picks where
// to read; each mode's first position names every partition.
func TestFirstStartModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mut     func(*Config)
		commit  int64 // group offset committed before the start (-1 none)
		startAt int64
	}{
		{"earliest", func(c *Config) { c.Start = StartEarliest }, -1, 0},
		{"latest", func(c *Config) { c.Start = StartLatest }, -1, 10},
		{"committed", func(c *Config) { c.Start = StartCommitted }, 4, 4},
		{"committed-none", func(c *Config) { c.Start = StartCommitted }, -1, 0},
		{"offsets", func(c *Config) { c.Start, c.StartOffsets = StartOffsets, map[int32]int64{0: 7} }, -1, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1)
			ctx := ctxFor(t)
			e.produceIDs(0, 10, 1)
			cfg := e.config()
			tc.mut(&cfg)
			if tc.commit >= 0 {
				var offs kadm.Offsets
				offs.Add(kadm.Offset{Topic: testTopic, Partition: 0, At: tc.commit, LeaderEpoch: -1})
				if _, err := e.adm.CommitOffsets(ctx, cfg.Group, offs); err != nil {
					t.Fatal(err)
				}
			}
			c := e.connector(cfg, nil)
			var start Position
			// Produce ids 10..14 once the start is fixed, then drain at 15.
			c.knobs.AfterStart = func(p Position) { start = p; e.produceIDs(10, 15, 1) }
			c.knobs.AfterPoll = func(p Position) {
				if p.Offsets[0] >= 15 {
					c.Drain()
				}
			}
			if err := c.Run(ctx); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if start.Offsets[0] != tc.startAt || len(start.Offsets) != 1 {
				t.Fatalf("start %v, want partition 0 at %d", start, tc.startAt)
			}
			want := map[int64]int{}
			for i := tc.startAt; i < 15; i++ {
				want[i] = 1
			}
			if got := e.ids(); mustJSON(t, got) != mustJSON(t, want) {
				t.Fatalf("rows %v, want ids [%d,15)", got, tc.startAt)
			}
		})
	}
}

// TestGroupCommitMetadata: after each checkpoint the decided offsets are
// committed to the group with metadata naming doris-sink and the decided
// checkpoint, "doris-sink:chk=<id>:label=<label>" (generation −1,
// accepted by a group with no members), readable with kadm.FetchOffsets.
func TestGroupCommitMetadata(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	e.produceIDs(0, 30, 3)
	var commits, failed atomic.Int32
	c := e.connector(e.config(), nil, WithTestingKnobs(&TestingKnobs{AfterGroupCommit: func(_ Position, err error) {
		commits.Add(1)
		if err != nil {
			failed.Add(1)
		}
	}}))
	ctx := ctxFor(t)
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatal(err)
	}
	if commits.Load() == 0 || failed.Load() != 0 || c.Metrics().GroupCommitFailures.Load() != 0 {
		t.Fatalf("group commits %d, failed %d", commits.Load(), failed.Load())
	}
	fo, err := e.adm.FetchOffsets(ctx, "doris-sink-test")
	if err != nil {
		t.Fatal(err)
	}
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil || st.Decided == nil {
		t.Fatalf("checkpoint store: %+v, %v; want a decision", st, err)
	}
	wantMD := fmt.Sprintf("doris-sink:chk=%d:label=%s", st.Decided.ID, st.Decided.Label)
	end := e.end(testTopic)
	for p, want := range end.Offsets {
		o, ok := fo.Lookup(testTopic, p)
		if !ok || o.At != want || o.Metadata != wantMD {
			t.Fatalf("partition %d: committed %+v, want offset %d with metadata %q", p, o, want, wantMD)
		}
	}
}

// TestNewPartitionsPickedUp: a partition added while running is found by
// the refresh and read from its earliest offset.
func TestNewPartitionsPickedUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 10, 2)
	clk := newManualClock()
	cfg := e.config()
	cfg.PartitionRefresh = time.Minute
	started, added := make(chan struct{}), make(chan []int32, 1)
	var want atomic.Pointer[Position]
	c := e.connector(cfg, nil, WithClock(clk), WithTestingKnobs(&TestingKnobs{
		AfterStart:           func(Position) { close(started) },
		AfterPartitionsAdded: func(ps []int32) { added <- ps },
	}))
	c.knobs.AfterPoll = func(p Position) {
		if w := want.Load(); w != nil && covers(p, *w) {
			c.Drain()
		}
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-started
	if _, err := e.adm.CreatePartitions(ctx, 1, testTopic); err != nil {
		t.Fatal(err)
	}
	e.produceIDs(10, 13, 3) // 10..12 on partitions 1, 2, 0
	w := e.end(testTopic)
	if len(w.Offsets) != 3 {
		t.Fatalf("topic has partitions %v, want 3", w.Offsets)
	}
	want.Store(&w)
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	select {
	case ps := <-added:
		if len(ps) != 1 || ps[0] != 2 {
			t.Fatalf("added %v, want [2]", ps)
		}
	case <-ctx.Done():
		t.Fatal("partition 2 never added")
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(13)
}

// TestCheckpointInterval: with no cap reached, the interval (on an injected
// clock) ends the checkpoint while the connector is idle.
func TestCheckpointInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 6, 2)
	clk := newManualClock()
	cfg := e.config()
	cfg.CheckpointMaxRows, cfg.CheckpointInterval = 0, 10*time.Second
	decided := make(chan CheckpointStats, 1)
	consumed := make(chan struct{})
	want := e.end(testTopic)
	var once atomic.Bool
	c := e.connector(cfg, nil, WithClock(clk), WithOnCheckpoint(func(s CheckpointStats) { decided <- s }),
		WithTestingKnobs(&TestingKnobs{AfterPoll: func(p Position) {
			if covers(p, want) && once.CompareAndSwap(false, true) {
				close(consumed)
			}
		}}))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-consumed
	if got := e.ids(); len(got) != 0 {
		t.Fatalf("rows visible before the interval: %v", got)
	}
	if err := clk.waitTimer(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	var s CheckpointStats
	select {
	case s = <-decided:
	case <-ctx.Done():
		t.Fatal("no checkpoint after the interval")
	}
	if s.Err != nil || s.Rows != 6 || !covers(s.End, want) {
		t.Fatalf("checkpoint %+v, want 6 rows up to %v", s, want)
	}
	c.Drain()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(6)
}
