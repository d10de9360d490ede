package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MembershipStatus is the consumer-group membership of a group-mode member
// (job.slots ≥ 2) in Status; absent for a standalone job.
type MembershipStatus struct {
	// Group is kafka.group.
	Group string `json:"group"`
	// InGroup is true while the member holds an assignment of the group's
	// current generation (Generation; Slots are its slots).
	InGroup    bool  `json:"in_group"`
	Generation int32 `json:"generation,omitempty"`
	Slots      []int `json:"slots"`
	// RebalancingSince is when the member went out of the group (its
	// group session failed, or it lost its slots); RebalancingSeconds is
	// how long ago that was when the status was taken. Absent in the
	// group.
	RebalancingSince   *time.Time `json:"rebalancing_since,omitempty"`
	RebalancingSeconds float64    `json:"rebalancing_seconds,omitempty"`
	// SessionFailures counts the member's failed group sessions since the
	// process started; LastError is the last one's error.
	SessionFailures int64  `json:"session_failures"`
	LastError       string `json:"last_error,omitempty"`
}

// membership is the membership state behind MembershipStatus and its series.
type membership struct {
	mu       sync.Mutex
	st       *MembershipStatus
	since    time.Time
	failures prometheus.Counter
	out      prometheus.Gauge
}

func newMembership(reg *prometheus.Registry) *membership {
	g := &membership{
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "doris_sink_group_session_failures_total",
			Help: "Group sessions of this group-mode member that failed (a JoinGroup or SyncGroup that failed or timed out, a heartbeat refused) or whose slots were lost.",
		}),
		out: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "doris_sink_group_rebalancing_since_timestamp_seconds",
			Help: "Unix time since which this group-mode member is out of its consumer group (rebalancing, or its joins failing); 0 while it holds an assignment.",
		}),
	}
	reg.MustRegister(g.failures, g.out)
	return g
}

// GroupIn records that the member holds the assignment of generation gen
// of consumer group name (slots: its slots).
func (m *Metrics) GroupIn(name string, gen int32, slots []int) {
	g := m.membership
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.status(name)
	st.InGroup, st.Generation, st.Slots = true, gen, slices.Clone(slots)
	g.since = time.Time{}
	g.out.Set(0)
}

// GroupOut records that the member is out of consumer group name since
// since, because of err (a failed group session; counted).
func (m *Metrics) GroupOut(name string, since time.Time, err error) {
	g := m.membership
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.status(name)
	st.InGroup, st.Slots = false, []int{}
	g.since = since
	g.out.Set(float64(since.UnixNano()) / 1e9)
	if err != nil {
		st.SessionFailures++
		st.LastError = err.Error()
		g.failures.Inc()
	}
}

// status returns the group status, created for name; g.mu is held.
func (g *membership) status(name string) *MembershipStatus {
	if g.st == nil {
		g.st = &MembershipStatus{Slots: []int{}}
	}
	g.st.Group = name
	return g.st
}

// snapshot returns a copy of the group status at now (nil: not a group
// member).
func (g *membership) snapshot(now time.Time) *MembershipStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st == nil {
		return nil
	}
	st := *g.st
	st.Slots = slices.Clone(g.st.Slots)
	if !g.since.IsZero() {
		since := g.since
		st.RebalancingSince, st.RebalancingSeconds = &since, max(now.Sub(since).Seconds(), 0)
	}
	return &st
}
