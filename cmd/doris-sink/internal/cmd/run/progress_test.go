package run

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// run's progress goroutine logs one line per tick (ticks from the test)
// and stops when asked.
func TestStartProgressLogsOnTick(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	if err := m.RegisterConnector("orders", "db.t", &kafka.Metrics{}); err != nil {
		t.Fatal(err)
	}
	m.SetReady(true)
	var logs syncBuffer
	logged := make(chan struct{}, 1)
	log := slog.New(notifyHandler{slog.NewTextHandler(&logs, nil), logged})
	ticks := make(chan time.Time)
	stop := startProgress(t.Context(), m, log, ticks)
	ticks <- time.Now().Add(time.Minute)
	<-logged
	stop()
	if out := logs.String(); !strings.Contains(out, "msg=progress") || !strings.Contains(out, "state=running") ||
		!strings.Contains(out, "table=db.t") {
		t.Errorf("progress line %q", out)
	}
}

// notifyHandler signals after each record.
type notifyHandler struct {
	slog.Handler
	ch chan<- struct{}
}

func (h notifyHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	h.ch <- struct{}{}
	return err
}
