package metrics

import (
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// connectorCounter is one counter of a connector (kafka.Metrics), exported
// standalone by RegisterConnector and per slot by the slots collector.
type connectorCounter struct {
	name, help string
	read       func(*kafka.Metrics) int64
}

// connectorCounters are the counters every connector exports.
var connectorCounters = []connectorCounter{
	{"doris_sink_records_consumed_total", "Kafka records consumed (re-reads after a rewind count again).", func(k *kafka.Metrics) int64 { return k.Records.Load() }},
	{"doris_sink_record_bytes_consumed_total", "Value bytes of the records consumed.", func(k *kafka.Metrics) int64 { return k.Bytes.Load() }},
	{"doris_sink_rows_written_total", "Rows handed to the loader.", func(k *kafka.Metrics) int64 { return k.Rows.Load() }},
	{"doris_sink_checkpoints_total", "Checkpoints the connector saw decided.", func(k *kafka.Metrics) int64 { return k.Checkpoints.Load() }},
	{"doris_sink_checkpoint_failures_total", "Checkpoints that failed (each followed by Recover and a rewind).", func(k *kafka.Metrics) int64 { return k.CheckpointFailures.Load() }},
	{"doris_sink_recovers_total", "loader.Recover calls, the start included.", func(k *kafka.Metrics) int64 { return k.Recovers.Load() }},
	{"doris_sink_dead_lettered_total", "Records sent to the dead-letter topic.", func(k *kafka.Metrics) int64 { return k.DeadLettered.Load() }},
	{"doris_sink_dead_letters_truncated_total", "Dead letters whose value was truncated to the dead-letter topic's max.message.bytes.", func(k *kafka.Metrics) int64 { return k.DeadLettersTruncated() }},
	{"doris_sink_unknown_fields_total", "JSON fields of rows that are not columns of the table (Doris ignores them).", func(k *kafka.Metrics) int64 { return k.UnknownFields.Load() }},
	{"doris_sink_zombie_txns_aborted_total", "Running txns of the job's scope at or below its last decided checkpoint that its store does not decide (a fenced process's late precommit), aborted by txn id by the zombie sweep.", func(k *kafka.Metrics) int64 { return k.ZombieTxnsAborted() }},
	{"doris_sink_zombie_txn_abort_failures_total", "Zombie txns whose abort by the sweep failed (retried by the next sweep) or that someone else committed.", func(k *kafka.Metrics) int64 { return k.ZombieTxnAbortFailures() }},
	{"doris_sink_table_changes_total", "Changes the sink made to its table: created (doris.create_table), ALTER TABLE (records.schema_evolution).", func(k *kafka.Metrics) int64 { return k.TableChanges.Load() }},
}

// Help texts shared by the standalone and the per-slot series.
const (
	helpDeadLetteredByReason = "Records sent to the dead-letter topic, per reason (convert: the record cannot be converted)."
	helpLag                  = "Records between the last one read (not loaded: see doris_sink_lag_loaded_records) and the partition's high watermark at the last fetch."
	helpLoadedLag            = "Records between the end of the last decided checkpoint (loaded, or committed right after) and the partition's high watermark at the last fetch."
	helpStalled              = "1 while the connector cannot make progress (a failure it retries or one it stops on), 0 otherwise."
	helpStalledSeconds       = "Seconds since the current stall began (its first failure); 0 when not stalled."
)

// Ownership is what a group member knows of its slots (WatchOwnership).
type Ownership struct {
	// Owned are the slots in the member's current assignment.
	Owned map[int]bool
	// MemberID and Generation are the member's in the group ("" and -1
	// out of it).
	MemberID   string
	Generation int32
}

// slots is the process-level collector of a group member: at scrape time
// it lists the member's current slot jobs (no registration per slot job,
// so a rebuilt job never collides), and the ownership of every slot.
type slots struct {
	m            *Metrics
	n            int
	topic, table string

	counters                                  []*prometheus.Desc // as connectorCounters
	byReason, lag, loadedLag, stalled, stallS *prometheus.Desc
	decidedID, decidedAt, owned, generation   *prometheus.Desc

	mu        sync.Mutex
	jobs      map[int]*slotJob // the slot jobs running now
	base      map[int]*slotBase
	ownership func() Ownership
}

// slotJob is one running slot job.
type slotJob struct {
	km    *kafka.Metrics
	store *ObservedStore // nil: not observed
}

// slotBase accumulates the counters of a slot's ended jobs on this
// member, so that a rebuilt job continues them (no counter reset).
type slotBase struct {
	counters []int64 // as connectorCounters
	byReason map[kafka.DeadLetterReason]int64
}

func newSlots(n int, topic, table string) *slots {
	c := prometheus.Labels{"topic": topic, "table": table}
	s := &slots{n: n, topic: topic, table: table, jobs: map[int]*slotJob{}, base: map[int]*slotBase{}}
	for _, cc := range connectorCounters {
		s.counters = append(s.counters, prometheus.NewDesc(cc.name, cc.help, []string{"slot"}, c))
	}
	tl := prometheus.Labels{"table": table}
	s.byReason = prometheus.NewDesc("doris_sink_dead_lettered_by_reason_total", helpDeadLetteredByReason, []string{"slot", "reason"}, c)
	s.lag = prometheus.NewDesc("doris_sink_lag_records", helpLag, []string{"slot", "topic", "partition"}, tl)
	s.loadedLag = prometheus.NewDesc("doris_sink_lag_loaded_records", helpLoadedLag, []string{"slot", "topic", "partition"}, tl)
	s.stalled = prometheus.NewDesc("doris_sink_stalled", helpStalled, []string{"slot"}, c)
	s.stallS = prometheus.NewDesc("doris_sink_stalled_seconds", helpStalledSeconds, []string{"slot"}, c)
	s.decidedID = prometheus.NewDesc("doris_sink_slot_checkpoint_decided_id",
		"Id of the slot's last decided checkpoint (loaded at the slot job's recovery or decided since).", []string{"slot"}, tl)
	s.decidedAt = prometheus.NewDesc("doris_sink_slot_checkpoint_decided_timestamp_seconds",
		"When the slot's last decided checkpoint was decided (Unix seconds).", []string{"slot"}, tl)
	s.owned = prometheus.NewDesc("doris_sink_slot_owned",
		"1 while the slot is in this member's assignment, 0 otherwise; every member exports every slot of the job, so the sum over members is 1 per slot.",
		[]string{"slot"}, tl)
	s.generation = prometheus.NewDesc("doris_sink_group_generation",
		"The member's consumer-group generation (-1 out of the group).", nil, tl)
	return s
}

// Describe sends every descriptor of the slot series.
func (s *slots) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range s.counters {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{s.byReason, s.lag, s.loadedLag, s.stalled, s.stallS, s.decidedID, s.decidedAt, s.owned, s.generation} {
		ch <- d
	}
}

// Collect reads the running slot jobs and the ownership now.
func (s *slots) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	ownership := s.ownership
	type entry struct {
		slot int
		job  slotJob
		base slotBase
	}
	var jobs []entry
	for slot, j := range s.jobs {
		e := entry{slot: slot, job: *j}
		if b := s.base[slot]; b != nil {
			e.base = slotBase{counters: append([]int64(nil), b.counters...), byReason: maps.Clone(b.byReason)}
		}
		jobs = append(jobs, e)
	}
	s.mu.Unlock()
	if ownership != nil {
		o := ownership()
		for slot := range s.n {
			v := 0.0
			if o.Owned[slot] {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(s.owned, prometheus.GaugeValue, v, strconv.Itoa(slot))
		}
		ch <- prometheus.MustNewConstMetric(s.generation, prometheus.GaugeValue, float64(o.Generation))
	}
	now := s.m.now()
	for _, e := range jobs {
		sl := strconv.Itoa(e.slot)
		km := e.job.km
		for i, cc := range connectorCounters {
			v := cc.read(km)
			if i < len(e.base.counters) {
				v += e.base.counters[i]
			}
			ch <- prometheus.MustNewConstMetric(s.counters[i], prometheus.CounterValue, float64(v), sl)
		}
		reasons := km.DeadLetteredByReason()
		for r, n := range e.base.byReason {
			reasons[r] += n
		}
		for r, n := range reasons {
			ch <- prometheus.MustNewConstMetric(s.byReason, prometheus.CounterValue, float64(n), sl, string(r))
		}
		pos := km.TopicPositions()
		for t, parts := range km.TopicLag() {
			for p, lag := range parts {
				ch <- prometheus.MustNewConstMetric(s.lag, prometheus.GaugeValue, float64(lag), sl, t, strconv.Itoa(int(p)))
			}
		}
		for t, parts := range loadedLag(pos) {
			for p, lag := range parts {
				ch <- prometheus.MustNewConstMetric(s.loadedLag, prometheus.GaugeValue, float64(lag), sl, t, strconv.Itoa(int(p)))
			}
		}
		stall, secs := 0.0, 0.0
		if st := km.Stall(); st.Reason != "" {
			stall, secs = 1, max(now.Sub(st.Since).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(s.stalled, prometheus.GaugeValue, stall, sl)
		ch <- prometheus.MustNewConstMetric(s.stallS, prometheus.GaugeValue, secs, sl)
		if e.job.store != nil {
			if d, ok := e.job.store.LastDecision(); ok {
				ch <- prometheus.MustNewConstMetric(s.decidedID, prometheus.GaugeValue, float64(d.ID), sl)
				ch <- prometheus.MustNewConstMetric(s.decidedAt, prometheus.GaugeValue, float64(d.DecidedAt.UnixNano())/1e9, sl)
			}
		}
	}
}

// WatchOwnership makes doris_sink_slot_owned (every slot) and /status read
// the member's ownership through f at scrape time. A no-op standalone.
func (m *Metrics) WatchOwnership(f func() Ownership) {
	if m.group == nil {
		return
	}
	m.group.mu.Lock()
	m.group.ownership = f
	m.group.mu.Unlock()
}

// AttachSlot makes km and store (nil: not observed) the running job of
// slot: its series are exported from now on, its counters continuing
// those of the slot's previous jobs on this member. A no-op standalone.
func (m *Metrics) AttachSlot(slot int, km *kafka.Metrics, store *ObservedStore) {
	if m.group == nil {
		return
	}
	m.group.mu.Lock()
	m.group.jobs[slot] = &slotJob{km: km, store: store}
	m.group.mu.Unlock()
}

// DetachSlot ends the job km of slot: its counters are kept for the
// slot's next job on this member (a rebuild), its gauges (lag, stall,
// decided checkpoint) go away until then. A job that is not the slot's
// current one is ignored.
func (m *Metrics) DetachSlot(slot int, km *kafka.Metrics) {
	g := m.group
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[slot]
	if j == nil || j.km != km {
		return
	}
	delete(g.jobs, slot)
	b := g.base[slot]
	if b == nil {
		b = &slotBase{counters: make([]int64, len(connectorCounters)), byReason: map[kafka.DeadLetterReason]int64{}}
		g.base[slot] = b
	}
	for i, cc := range connectorCounters {
		b.counters[i] += cc.read(km)
	}
	for r, n := range km.DeadLetteredByReason() {
		b.byReason[r] += n
	}
}

// ReleaseSlot forgets slot on this member (it moved away): its series,
// the Doris and store ones included, go away; if it comes back its
// counters start from 0 again (a counter reset, which rate() handles).
func (m *Metrics) ReleaseSlot(slot int) {
	g := m.group
	if g == nil {
		return
	}
	g.mu.Lock()
	delete(g.jobs, slot)
	delete(g.base, slot)
	g.mu.Unlock()
	l := prometheus.Labels{"slot": strconv.Itoa(slot)}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{m.rows, m.rowsCommit, m.bytes, m.checkpoints, m.txns, m.stages} {
		v.DeletePartialMatch(l)
	}
}

// status is the member's slots now (Status.Group); ready is the
// process's readiness.
func (s *slots) status(now time.Time, ready bool) *GroupStatus {
	s.mu.Lock()
	ownership := s.ownership
	s.mu.Unlock()
	jobs := map[string]job{}
	for _, j := range s.running() {
		jobs[j.slot] = j
	}
	gs := &GroupStatus{Topic: s.topic, Table: s.table, Generation: -1, Slots: s.n, Owned: []SlotStatus{}}
	if ownership == nil {
		return gs
	}
	o := ownership()
	gs.MemberID, gs.Generation = o.MemberID, o.Generation
	for slot := range s.n {
		if !o.Owned[slot] {
			continue
		}
		ss := SlotStatus{Slot: slot, Generation: o.Generation}
		if j, ok := jobs[strconv.Itoa(slot)]; ok {
			js := s.m.jobStatus(j, now, ready)
			ss.Job = &js
		}
		gs.Owned = append(gs.Owned, ss)
	}
	return gs
}

// running returns the running slot jobs, by slot.
func (s *slots) running() []job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []job
	for slot := range s.n {
		if j := s.jobs[slot]; j != nil {
			out = append(out, job{table: s.table, topic: s.topic, km: j.km, store: j.store, positions: j.km.TopicPositions,
				slot: strconv.Itoa(slot)})
		}
	}
	return out
}
