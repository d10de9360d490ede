package kafka

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// A Connector with a partition filter (group mode: one writer slot's
// partitions) reads only the partitions it accepts: at the start, in every
// decided position, and among partitions added later (PartitionRefresh
// assigns an accepted new partition from its earliest offset, ignores the
// others).
func TestPartitionFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	ctx := ctxFor(t)
	e.produceIDs(0, 40, 4)
	clk := newManualClock()
	cfg := e.config()
	cfg.PartitionRefresh = time.Minute
	odd := func(topic string, p int32) bool { return topic == testTopic && p%2 == 1 }
	started, added := make(chan struct{}), make(chan []int32, 1)
	var want atomic.Pointer[Position]
	var rec recorder
	c := e.connector(cfg, nil, WithClock(clk), WithPartitionFilter(odd), WithOnCheckpoint(rec.add),
		WithTestingKnobs(&TestingKnobs{
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
	if _, err := e.adm.CreatePartitions(ctx, 2, testTopic); err != nil {
		t.Fatal(err)
	}
	e.produceIDs(40, 46, 6) // 40..45 on partitions 4, 5, 0, 1, 2, 3
	end := e.end(testTopic)
	w := Position{Topic: testTopic, Offsets: map[int32]int64{1: end.Offsets[1], 3: end.Offsets[3], 5: end.Offsets[5]}}
	want.Store(&w)
	if err := clk.waitTimer(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	select {
	case ps := <-added:
		if !slices.Equal(ps, []int32{5}) {
			t.Fatalf("added %v, want [5] (4 is not accepted)", ps)
		}
	case <-ctx.Done():
		t.Fatal("partition 5 never added")
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := e.ids()
	for i := int64(0); i < 46; i++ {
		p := i % 4
		if i >= 40 {
			p = i % 6
		}
		if n, wantN := got[i], map[bool]int{true: 1, false: 0}[p%2 == 1]; n != wantN {
			t.Errorf("id %d (partition %d) loaded %d times, want %d", i, p, n, wantN)
		}
	}
	for _, s := range rec.stats() {
		for p := range s.End.Of(testTopic) {
			if p%2 == 0 {
				t.Errorf("checkpoint end %s names partition %d, which the filter does not accept", s.End.String(), p)
			}
		}
	}
	pos, ok := c.Decided()
	if !ok || !covers(pos, w) || len(pos.Of(testTopic)) != 3 {
		t.Errorf("decided %s, want exactly partitions 1, 3, 5 at %s", pos.String(), w.String())
	}
}
