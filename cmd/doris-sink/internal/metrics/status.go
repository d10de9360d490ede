package metrics

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// States of a job in the running process (JobStatus.State).
const (
	// StateRecovering: the process has not finished its start-up recovery
	// (docs/design.md §2 invariant 4); /readyz answers 503.
	StateRecovering = "recovering"
	// StateRunning: recovered and making progress.
	StateRunning = "running"
	// StateStalled: the connector reports a stall (kafka.Metrics.Stall):
	// it retries a failure, or stops on one (Fatal); /readyz answers 503.
	StateStalled = "stalled"
)

// Status is the JSON document `GET /status` serves on metrics.listen; the
// `doris-sink status` command reads it. Field names are stable; fields
// may be added (group mode will add per-member fields).
type Status struct {
	// PID is the process id; StartedAt when its metrics were created.
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// Now is the process's clock when it answered (ages are relative to
	// it).
	Now time.Time `json:"now"`
	// Ready is /readyz's answer: recovered and no job stalled.
	Ready bool `json:"ready"`
	// Jobs has one entry per table the process loads (standalone; a
	// group member lists its slot jobs in Group).
	Jobs []JobStatus `json:"jobs"`
	// Group is set on a group-mode member (job.slots ≥ 2): its slots.
	Group *GroupStatus `json:"group,omitempty"`
	// Membership is the group-mode member's consumer-group membership
	// (whether it is in the group, or rebalancing and since when); absent
	// for a standalone job.
	Membership *MembershipStatus `json:"membership,omitempty"`
}

// GroupStatus is a group-mode member's view of its job's slots.
type GroupStatus struct {
	// Topic and Table are the job's.
	Topic string `json:"topic"`
	Table string `json:"table"`
	// MemberID and Generation are the member's in the consumer group (""
	// and -1 out of it).
	MemberID   string `json:"member_id"`
	Generation int32  `json:"generation"`
	// Slots are the job's slot count; Owned the slots this member owns
	// now, each with its job (sorted by slot).
	Slots int          `json:"slots"`
	Owned []SlotStatus `json:"owned"`
}

// SlotStatus is one slot this member owns.
type SlotStatus struct {
	Slot int `json:"slot"`
	// Generation is the member's generation the slot is owned under.
	Generation int32 `json:"generation"`
	// Job is the slot's running job (state, stall, last decided
	// checkpoint, positions and lag per partition); nil while its job is
	// being built, suspended or rebuilt.
	Job *JobStatus `json:"job,omitempty"`
}

// JobStatus is one job (one table) of the running process.
type JobStatus struct {
	// Job is the store owner's job name; "" until recovery loaded the
	// store.
	Job   string `json:"job"`
	Topic string `json:"topic"`
	Table string `json:"table"`
	// State is StateRecovering, StateRunning or StateStalled.
	State string `json:"state"`
	// Stall is set while State is StateStalled.
	Stall *StallStatus `json:"stall,omitempty"`
	// LastCheckpoint is the last decided checkpoint; nil before the first.
	LastCheckpoint *CheckpointStatus `json:"last_checkpoint,omitempty"`
	// Partitions are the connector's positions, by partition.
	Partitions []PartitionStatus `json:"partitions"`
	// Counters since the process started.
	RowsWritten        int64 `json:"rows_written"`
	RowBytes           int64 `json:"row_bytes"`
	Checkpoints        int64 `json:"checkpoints"`
	CheckpointFailures int64 `json:"checkpoint_failures"`
}

// StallStatus is why a job does not progress (kafka.Stall).
type StallStatus struct {
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Seconds is how long the stall has lasted when the status was taken.
	Seconds float64 `json:"seconds"`
	// Fatal is true when retrying cannot fix the cause and the job stops.
	Fatal bool `json:"fatal"`
}

// CheckpointStatus is a decided checkpoint.
type CheckpointStatus struct {
	ID        uint64    `json:"id"`
	Label     string    `json:"label"`
	TxnID     int64     `json:"txn_id"`
	DecidedAt time.Time `json:"decided_at"`
	// AgeSeconds is the time since DecidedAt when the status was taken.
	AgeSeconds float64 `json:"age_seconds"`
	// Committed is true once Doris reported the transaction visible (or
	// the checkpoint was empty).
	Committed bool `json:"committed"`
	Empty     bool `json:"empty,omitempty"`
}

// PartitionStatus are the positions of one partition; an absent offset
// is not known (yet).
type PartitionStatus struct {
	// Topic is the partition's topic (a job may read several).
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// HighWatermark at the connector's last fetch with records.
	HighWatermark *int64 `json:"high_watermark,omitempty"`
	// Read is the next offset to read; Loaded the end of the last decided
	// checkpoint (kafka.PartitionPosition).
	Read   *int64 `json:"read,omitempty"`
	Loaded *int64 `json:"loaded,omitempty"`
	// Lag is HighWatermark − Loaded: records not loaded yet.
	Lag *int64 `json:"lag,omitempty"`
}

// Status returns the process's status now.
func (m *Metrics) Status() Status {
	now := m.now()
	st := Status{PID: m.pid, StartedAt: m.started, Now: now, Ready: m.ready.Load(), Jobs: []JobStatus{}, Membership: m.membership.snapshot(now)}
	for _, j := range m.snapshotJobs() {
		js := m.jobStatus(j, now, st.Ready)
		if js.Stall != nil {
			st.Ready = false
		}
		st.Jobs = append(st.Jobs, js)
	}
	if g := m.group; g != nil {
		st.Group = g.status(now, st.Ready)
		for _, s := range st.Group.Owned {
			if s.Job != nil && s.Job.Stall != nil {
				st.Ready = false
			}
		}
	}
	return st
}

// jobStatus is j's status now; ready is the process's readiness.
func (m *Metrics) jobStatus(j job, now time.Time, ready bool) JobStatus {
	js := JobStatus{Topic: j.topic, Table: j.table, State: StateRunning, Partitions: []PartitionStatus{}}
	if !ready {
		js.State = StateRecovering
	}
	if j.store != nil {
		js.Job = j.store.Job()
		if d, ok := j.store.LastDecision(); ok {
			js.LastCheckpoint = &CheckpointStatus{ID: d.ID, Label: d.Label, TxnID: d.TxnID, DecidedAt: d.DecidedAt,
				AgeSeconds: max(now.Sub(d.DecidedAt).Seconds(), 0), Committed: d.Committed, Empty: d.Empty}
		}
	}
	if km := j.km; km != nil {
		if s := km.Stall(); s.Reason != "" {
			js.State = StateStalled
			js.Stall = stallStatus(s, now)
		}
		js.Partitions = partitionStatus(j.positions())
		js.RowsWritten, js.RowBytes = km.Rows.Load(), km.RowBytes.Load()
		js.Checkpoints, js.CheckpointFailures = km.Checkpoints.Load(), km.CheckpointFailures.Load()
	}
	return js
}

func stallStatus(s kafka.Stall, now time.Time) *StallStatus {
	return &StallStatus{Reason: s.Reason, Since: s.Since, Seconds: max(now.Sub(s.Since).Seconds(), 0), Fatal: s.Fatal}
}

// partitionStatus lists pos by topic and partition; offsets of -1
// (unknown) are left out.
func partitionStatus(byTopic map[string]map[int32]kafka.PartitionPosition) []PartitionStatus {
	known := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	out := []PartitionStatus{}
	for topic, pos := range byTopic {
		for p, pp := range pos {
			ps := PartitionStatus{Topic: topic, Partition: p, HighWatermark: known(pp.HighWatermark), Read: known(pp.Read), Loaded: known(pp.Loaded)}
			if ps.HighWatermark != nil && ps.Loaded != nil {
				ps.Lag = known(max(*ps.HighWatermark-*ps.Loaded, 0))
			}
			out = append(out, ps)
		}
	}
	slices.SortFunc(out, func(a, b PartitionStatus) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// notReady returns why /readyz answers 503, "" when ready.
func (m *Metrics) notReady() string {
	if g := m.membership.snapshot(m.now()); g != nil && g.RebalancingSince != nil {
		why := "out of consumer group " + g.Group + " (rebalancing) for " +
			time.Duration(g.RebalancingSeconds*float64(time.Second)).Round(time.Second).String() + " since " +
			g.RebalancingSince.UTC().Format(time.RFC3339)
		if g.LastError != "" {
			why += ": " + g.LastError
		}
		return why
	}
	if !m.ready.Load() {
		return "recovering"
	}
	now := m.now()
	jobs := m.snapshotJobs()
	if g := m.group; g != nil {
		jobs = append(jobs, g.running()...)
	}
	for _, j := range jobs {
		if j.km == nil {
			continue
		}
		if s := j.km.Stall(); s.Reason != "" {
			kind := "stalled"
			if s.Fatal {
				kind = "stalled (fatal: stopping)"
			}
			what := j.table
			if j.slot != "" {
				what += " slot " + j.slot
			}
			return kind + " " + what + " for " + now.Sub(s.Since).Round(time.Second).String() +
				" since " + s.Since.UTC().Format(time.RFC3339) + ": " + s.Reason
		}
	}
	return ""
}

// serveStatus answers GET /status with Status as JSON.
func (m *Metrics) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	writeJSON(w, m.Status())
}
