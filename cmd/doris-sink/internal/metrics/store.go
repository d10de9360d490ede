package metrics

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// ObservedStore is a checkpoint.Store whose writes are timed (announce or
// decide) and whose decisions are counted. It remembers the job name and
// the last decision it loaded or saved, for /status and the progress line.
type ObservedStore struct {
	s     checkpoint.Store
	m     *Metrics
	table string
	slot  string // the slot label in group mode

	mu      sync.Mutex
	decided uint64
	job     string
	last    *checkpoint.Decision // a copy; nil before the first decision
}

var _ checkpoint.Store = (*ObservedStore)(nil)

// WrapStore returns s observed for table ("db.table").
func (m *Metrics) WrapStore(s checkpoint.Store, table string) *ObservedStore {
	o := &ObservedStore{s: s, m: m, table: table}
	m.updateJob(table, func(j *job) { j.store = o })
	return o
}

// WrapSlotStore is WrapStore for the store of slot's job in group mode
// (NewGroup): its series carry slot="<slot>"; AttachSlot makes it the
// slot's store in /status.
func (m *Metrics) WrapSlotStore(s checkpoint.Store, table string, slot int) *ObservedStore {
	return &ObservedStore{s: s, m: m, table: table, slot: strconv.Itoa(slot)}
}

// Load passes through and remembers the job and the decided checkpoint.
func (o *ObservedStore) Load(ctx context.Context) (*checkpoint.State, error) {
	st, err := o.s.Load(ctx)
	if err == nil {
		o.mu.Lock()
		o.job = st.Owner.Job
		if st.Decided != nil {
			o.decided = st.Decided.ID
		}
		o.remember(st.Decided)
		o.mu.Unlock()
	}
	return st, err
}

// Save passes through, timing it as a decision when it changes the decided
// checkpoint and as an announcement otherwise.
func (o *ObservedStore) Save(ctx context.Context, st *checkpoint.State) error {
	t0 := time.Now()
	err := o.s.Save(ctx, st)
	d := time.Since(t0)
	o.mu.Lock()
	defer o.mu.Unlock()
	decides := st.Decided != nil && st.Decided.ID != o.decided
	stage := StageAnnounce
	if decides {
		stage = StageDecide
	}
	o.m.stages.WithLabelValues(o.m.labels(o.table, o.slot, stage)...).Observe(d.Seconds())
	if err == nil && decides {
		o.decided = st.Decided.ID
		o.m.checkpoints.WithLabelValues(o.m.labels(o.table, o.slot)...).Inc()
	}
	if err == nil {
		o.remember(st.Decided) // also a decision marked committed
	}
	return err
}

// remember keeps a copy of d; o.mu is held.
func (o *ObservedStore) remember(d *checkpoint.Decision) {
	if d == nil {
		o.last = nil
		return
	}
	c := *d
	c.Start, c.End = slices.Clone(d.Start), slices.Clone(d.End)
	if d.Counts != nil {
		counts := *d.Counts
		c.Counts = &counts
	}
	o.last = &c
}

// LastDecision returns the last decision the store loaded or saved; ok is
// false before the first one.
func (o *ObservedStore) LastDecision() (d checkpoint.Decision, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		return checkpoint.Decision{}, false
	}
	return *o.last, true
}

// Job returns the job name of the store's owner, "" before Load.
func (o *ObservedStore) Job() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.job
}

// Close closes the wrapped store.
func (o *ObservedStore) Close() error { return o.s.Close() }
