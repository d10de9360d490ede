package doris

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Issue 30: an FE refusing connections printed one raw level=ERROR
// msg="request failed" line per retry. The retry logger prints one
// warning per retryLogEvery, counting the failures it did not log, and
// keeps retryablehttp's per-attempt chatter at debug.
func TestRetryLoggerRateLimits(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	l := newRetryLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.now = func() time.Time { return now }
	for i := range 25 {
		l.Debug("performing request", "url", "http://fe")
		l.Info("retrying", "attempt", i)
		l.Error("request failed", "error", "connection refused")
		now = now.Add(time.Second)
	}
	out := buf.String()
	if n := strings.Count(out, "\n"); n != 3 { // at 0 s, 10 s, 20 s
		t.Fatalf("%d lines for 25 failures over 25 s, want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "level=WARN msg=\"doris: request failed (one line per 10s at most)\" failures_not_logged=9") ||
		strings.Contains(out, "level=ERROR") {
		t.Errorf("want WARN lines counting the failures not logged, no ERROR:\n%s", out)
	}
}
