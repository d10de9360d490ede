package kafka

import (
	"sync"
	"time"
)

// Stall is why a connector is not making progress, as the connector last
// reported it. The zero Stall means "not stalled".
type Stall struct {
	// Reason says what fails and what it names (label, table, topic,
	// partition); empty when the connector is making progress.
	Reason string
	// Since is when the current stall began (the first failure of a run of
	// failures); zero when not stalled.
	Since time.Time
	// Fatal is true when retrying cannot fix the cause and the connector is
	// about to stop (or has stopped) with an error.
	Fatal bool
}

// stallState holds the connector's current Stall. It is safe for
// concurrent use; the zero value is "not stalled".
type stallState struct {
	mu sync.Mutex
	s  Stall
}

// Stall returns the connector's current stall; Reason is empty when the
// connector is making progress. Readiness probes and status views read it.
func (m *Metrics) Stall() Stall {
	m.stall.mu.Lock()
	defer m.stall.mu.Unlock()
	return m.stall.s
}

// SetStall records that the connector cannot progress for reason. Since
// keeps the time of the first report until ClearStall.
func (m *Metrics) SetStall(now time.Time, reason string, fatal bool) {
	m.stall.mu.Lock()
	defer m.stall.mu.Unlock()
	since := m.stall.s.Since
	if since.IsZero() {
		since = now
	}
	m.stall.s = Stall{Reason: reason, Since: since, Fatal: fatal}
}

// ClearStall records that the connector made progress again.
func (m *Metrics) ClearStall() {
	m.stall.mu.Lock()
	defer m.stall.mu.Unlock()
	m.stall.s = Stall{}
}
