package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
)

// startProgress logs the progress line (metrics.Progress) on every tick
// until the returned stop is called (or ctx ends); stop waits for the
// logging goroutine.
func startProgress(ctx context.Context, m *metrics.Metrics, log *slog.Logger, ticks <-chan time.Time) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	p := m.NewProgress(log, time.Now())
	go func() {
		defer close(done)
		p.Run(ctx, ticks)
	}()
	return func() {
		cancel()
		<-done
	}
}
