package kafka

import (
	"maps"
	"testing"
	"time"
)

// Issue 11 ("lag_records measures records read, not loaded, so it read 0
// while nothing loaded"): once every record is read but before the
// checkpoint is decided, Lag (read) is 0 per partition while LoadedLag is
// everything produced; after the decision both are 0 and Positions names
// the decided end as Loaded.
func TestLoadedLagCountsUndecidedRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	const n = 10
	e.produceIDs(0, n, 2)
	want := e.end(testTopic)
	clk := newManualClock()
	cfg := e.config()
	cfg.CheckpointMaxRows = 0 // only the interval timer (manual clock) decides
	var readLag, loadedLag, afterLag map[int32]int64
	var afterPos map[int32]PartitionPosition
	var c *Connector
	advanced := false
	c = e.connector(cfg, nil, WithClock(clk),
		WithTestingKnobs(&TestingKnobs{AfterPoll: func(p Position) {
			if advanced || !covers(p, want) {
				return
			}
			m := c.Metrics()
			readLag, loadedLag = m.Lag(), m.LoadedLag()
			advanced = true
			clk.Advance(time.Hour) // fire the checkpoint interval
		}}),
		WithOnCheckpoint(func(s CheckpointStats) {
			if s.Err != nil {
				t.Errorf("checkpoint failed: %v", s.Err)
				return
			}
			afterLag, afterPos = c.Metrics().LoadedLag(), c.Metrics().Positions()
			c.Drain()
		}))
	if err := c.Run(ctxFor(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for p, end := range want.Offsets {
		if readLag[p] != 0 {
			t.Errorf("partition %d: read lag %d with every record read, want 0", p, readLag[p])
		}
		if loadedLag[p] != end {
			t.Errorf("partition %d: loaded lag %d before any decision, want %d (every record)", p, loadedLag[p], end)
		}
		if afterLag[p] != 0 {
			t.Errorf("partition %d: loaded lag %d after the decision, want 0", p, afterLag[p])
		}
		if got := afterPos[p]; got.Loaded != end || got.Read != end || got.HighWatermark != end {
			t.Errorf("partition %d: positions %+v after the decision, want loaded = read = high watermark = %d", p, got, end)
		}
	}
	if !maps.Equal(loadedLag, want.Offsets) {
		t.Errorf("loaded lag %v, want %v", loadedLag, want.Offsets)
	}
}
