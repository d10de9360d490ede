package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// ObservedStore is a checkpoint.Store whose writes are timed (announce or
// decide) and whose decisions are counted.
type ObservedStore struct {
	s     checkpoint.Store
	m     *Metrics
	table string

	mu      sync.Mutex
	decided uint64
}

var _ checkpoint.Store = (*ObservedStore)(nil)

// WrapStore returns s observed for table ("db.table").
func (m *Metrics) WrapStore(s checkpoint.Store, table string) *ObservedStore {
	return &ObservedStore{s: s, m: m, table: table}
}

// Load passes through and remembers the decided position.
func (o *ObservedStore) Load(ctx context.Context) (*checkpoint.State, error) {
	st, err := o.s.Load(ctx)
	if err == nil && st.Decided != nil {
		o.mu.Lock()
		o.decided = st.Decided.ID
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
	o.m.stages.WithLabelValues(o.table, stage).Observe(d.Seconds())
	if err == nil && decides {
		o.decided = st.Decided.ID
		o.m.checkpoints.WithLabelValues(o.table).Inc()
	}
	return err
}

// Close closes the wrapped store.
func (o *ObservedStore) Close() error { return o.s.Close() }
