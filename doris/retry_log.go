package doris

import (
	"log/slog"
	"sync"
	"time"
)

// retryLogEvery is how often retryLogger logs a failed request at most.
const retryLogEvery = 10 * time.Second

// retryLogger is go-retryablehttp's logger for the small calls: its
// per-attempt "request failed" (an ERROR line per retry of an FE that is
// down) becomes one WARN line per retryLogEvery at most, counting the
// failures it stands for; its debug lines stay debug. The caller reports
// the call's final outcome (a retry is not a failure yet). Safe for
// concurrent use.
type retryLogger struct {
	log *slog.Logger
	now func() time.Time

	mu         sync.Mutex
	last       time.Time // when the last line was logged
	suppressed int       // failures since then, not logged
}

func newRetryLogger(log *slog.Logger) *retryLogger {
	return &retryLogger{log: log, now: time.Now}
}

// Error is called for a failed attempt (and an unreadable body).
func (l *retryLogger) Error(msg string, kv ...any) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < retryLogEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	l.log.Warn("doris: "+msg+" (one line per "+retryLogEvery.String()+" at most)",
		append([]any{"failures_not_logged", n}, kv...)...)
}

// Warn logs at WARN.
func (l *retryLogger) Warn(msg string, kv ...any) { l.log.Warn("doris: "+msg, kv...) }

// Info logs at DEBUG: retryablehttp's informational lines are per attempt.
func (l *retryLogger) Info(msg string, kv ...any) { l.log.Debug("doris: "+msg, kv...) }

// Debug logs at DEBUG.
func (l *retryLogger) Debug(msg string, kv ...any) { l.log.Debug("doris: "+msg, kv...) }
