package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader"
)

// sweepingSink is a Sink with sweep counters, as *loader.Loader.
type sweepingSink struct {
	nopSink
	stats *loader.SweepStats
}

func (s sweepingSink) SweepStats() *loader.SweepStats { return s.stats }

// The Connector's Metrics read the zombie sweep counters of a Sink that has
// them (doris_sink_zombie_txns_aborted_total), 0 for one that has none.
func TestMetricsReadTheSinksSweepCounters(t *testing.T) {
	t.Parallel()
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Topic: "t"}
	stats := &loader.SweepStats{}
	c, err := New(cfg, sweepingSink{stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	defer c.adminCl.Close()
	stats.Aborted.Add(3)
	stats.Failed.Add(1)
	if got, fails := c.Metrics().ZombieTxnsAborted(), c.Metrics().ZombieTxnAbortFailures(); got != 3 || fails != 1 {
		t.Errorf("ZombieTxnsAborted, ZombieTxnAbortFailures = %d, %d; want 3, 1", got, fails)
	}
	plain, err := New(cfg, nopSink{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.adminCl.Close()
	if got := plain.Metrics().ZombieTxnsAborted(); got != 0 {
		t.Errorf("ZombieTxnsAborted of a sink without sweeps = %d, want 0", got)
	}
}

// idleSweeper is a Sweeper whose sweeps are counted.
type idleSweeper struct {
	nopSink
	every time.Duration
	swept chan struct{}
}

func (s idleSweeper) Sweep(context.Context) error {
	select {
	case s.swept <- struct{}{}:
	default:
	}
	return nil
}
func (s idleSweeper) SweepEvery() time.Duration { return s.every }

// A Connector whose topic is idle never reaches a checkpoint boundary, so
// the Loader's own sweep would never run: it calls the Sweeper's Sweep
// every SweepEvery while no record is pending (on the system clock: a
// short interval here), again after each interval, and stops at a drain.
func TestIdleConnectorSweepsEveryInterval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	sink := idleSweeper{every: 10 * time.Millisecond, swept: make(chan struct{}, 4)}
	c, err := New(e.config(), sink, WithClock(newManualClock()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for i := range 3 {
		select {
		case <-sink.swept:
		case <-ctx.Done():
			t.Fatalf("sweep %d: the idle Connector did not sweep", i+1)
		}
	}
	c.Drain()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
