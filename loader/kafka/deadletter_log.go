package kafka

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// DefaultDeadLetterLogInterval is the default of WithDeadLetterLogInterval.
const DefaultDeadLetterLogInterval = 10 * time.Second

// WithDeadLetterLogInterval sets how often dead letters are logged: at most
// one WARN per reason per interval, with the count since the last line and
// the latest record's error, instead of one line per record. Zero or
// negative: one line per record. Default DefaultDeadLetterLogInterval.
func WithDeadLetterLogInterval(d time.Duration) Opt {
	return optFunc(func(o *options) { o.dlLogEvery = d })
}

// deadLetterLog rate-limits the dead-letter warnings (Run goroutine only).
type deadLetterLog struct {
	every   time.Duration
	reasons map[DeadLetterReason]*reasonLog
}

type reasonLog struct {
	last    time.Time // when the last line was logged (zero: never)
	pending int64     // dead letters since
	total   int64
	example error // the latest one's error
}

// note counts one dead letter of reason and logs a line when the reason's
// interval has passed since its last one (the first one at once).
func (d *deadLetterLog) note(log *slog.Logger, now time.Time, reason DeadLetterReason, err error, topic string) {
	if d.reasons == nil {
		d.reasons = map[DeadLetterReason]*reasonLog{}
	}
	r := d.reasons[reason]
	if r == nil {
		r = &reasonLog{}
		d.reasons[reason] = r
	}
	r.pending++
	r.total++
	r.example = err
	if r.last.IsZero() || d.every <= 0 || now.Sub(r.last) >= d.every {
		d.emit(log, now, reason, r, topic)
	}
}

func (d *deadLetterLog) emit(log *slog.Logger, now time.Time, reason DeadLetterReason, r *reasonLog, topic string) {
	log.Warn("records dead-lettered", "reason", string(reason), "count", r.pending, "total", r.total,
		"interval", d.every, "latest", r.example, "dead_letter_topic", topic)
	r.last, r.pending = now, 0
}

// flush logs the counts not logged yet (at the end of Run).
func (d *deadLetterLog) flush(log *slog.Logger, now time.Time, topic string) {
	for _, reason := range slices.Sorted(maps.Keys(d.reasons)) {
		if r := d.reasons[reason]; r.pending > 0 {
			d.emit(log, now, reason, r, topic)
		}
	}
}

// deadLetterCounts are the per-reason dead-letter counters of Metrics.
type deadLetterCounts struct {
	mu        sync.Mutex
	byReason  map[DeadLetterReason]int64
	truncated int64
}

// addDeadLettered counts one dead letter of reason (truncated: its value
// was cut to fit the dead-letter topic).
func (m *Metrics) addDeadLettered(reason DeadLetterReason, truncated bool) {
	m.dl.mu.Lock()
	defer m.dl.mu.Unlock()
	if m.dl.byReason == nil {
		m.dl.byReason = map[DeadLetterReason]int64{}
	}
	m.dl.byReason[reason]++
	if truncated {
		m.dl.truncated++
	}
}

// DeadLetteredByReason returns the dead letters counted per reason (re-reads
// after a rewind count again, as in DeadLettered).
func (m *Metrics) DeadLetteredByReason() map[DeadLetterReason]int64 {
	m.dl.mu.Lock()
	defer m.dl.mu.Unlock()
	return maps.Clone(m.dl.byReason)
}

// DeadLettersTruncated counts dead letters whose value was truncated to
// the dead-letter topic's max.message.bytes.
func (m *Metrics) DeadLettersTruncated() int64 {
	m.dl.mu.Lock()
	defer m.dl.mu.Unlock()
	return m.dl.truncated
}
