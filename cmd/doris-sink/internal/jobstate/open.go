package jobstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// readTimeout bounds reading the Kafka state topic when the caller's
// context has no deadline.
const readTimeout = 30 * time.Second

// Kafka is what the view read from the job's Kafka state topic
// (job.coordinator: kafka).
type Kafka struct {
	// StateTopic is the state topic; Offset the state record's offset in
	// it; End the last stable offset the read stopped at.
	StateTopic string `json:"state_topic"`
	Offset     int64  `json:"offset"`
	End        int64  `json:"end"`
	// Incarnation is the token of the process that wrote the record.
	Incarnation string `json:"incarnation,omitempty"`
	// Source is the source topic, its topic ID and the persisted first
	// start, as recorded with the positions.
	Source coordlog.Source `json:"source"`
	// Scopes lists the writer scopes with a state record.
	Scopes []string `json:"scopes"`
	// Operator is the newest operator record (`checkpoint resolve`) of
	// the scope, nil if none; Pending tells whether the job still has to
	// apply it (it names the decided checkpoint, not yet resolved).
	Operator *coordlog.Operator `json:"operator,omitempty"`
	Pending  bool               `json:"operator_pending,omitempty"`
}

// Open reads what the job of cfg knows, from where job.coordinator keeps
// it: the checkpoint store in job.data_dir (file), or the job's Kafka
// state topic (kafka), read-only with read_committed: no lock, no producer
// id, so it never disturbs or fences a running job. The evidence ledger is
// read from job.data_dir in both cases (it stays local). A job without any
// state is an error wrapping fs.ErrNotExist.
func Open(ctx context.Context, cfg *config.Config) (*View, error) {
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		return Read(cfg.Job.DataDir)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readTimeout)
		defer cancel()
	}
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	sn, err := coordlog.ReadSnapshot(ctx, cfg.Job.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("read job %s's decisions from Kafka (job.coordinator kafka): %w", cfg.Job.Name, err)
	}
	return FromSnapshot(sn, cfg.Job.DataDir)
}

// FromSnapshot builds the view of every writer scope of a Kafka state
// snapshot (View.Slots); View.State and View.Kafka are slot 0's (the
// standalone scope), or the first slot's when slot 0 has no record yet.
// The ledger is read from dataDir ("" reads none) and, in group mode
// (two slots or more), from every slot's SlotDataDir after it.
func FromSnapshot(sn *coordlog.Snapshot, dataDir string) (*View, error) {
	slots, count, err := slotsOf(sn)
	if err != nil {
		return nil, err
	}
	if len(slots) == 0 {
		return nil, fmt.Errorf("read job %s's decisions from Kafka: %w", sn.Job,
			&coordlog.NoStateError{Job: sn.Job, Topic: sn.Topic, Scope: coordlog.DefaultScope})
	}
	first := slots[0]
	for _, s := range slots {
		if s.Scope == coordlog.DefaultScope {
			first = s
		}
	}
	st := first.State
	k := &Kafka{StateTopic: sn.Topic, Offset: first.Offset, End: sn.End, Incarnation: first.Incarnation, Source: first.Source,
		Scopes: sn.Scopes(), Operator: first.Operator, Pending: first.Pending}
	v := &View{Dir: dataDir, State: st, Kafka: k, Slots: slots, SlotCount: count}
	if dataDir == "" {
		return v, nil
	}
	dirs := []string{dataDir}
	if count >= 2 { // group mode: each slot's ledger in its own directory
		for j := range count {
			dirs = append(dirs, SlotDataDir(dataDir, j, count))
		}
	}
	for _, dir := range dirs {
		entries, torn, err := ledger.ReadFile(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read ledger in %s: %w", dir, err)
		default:
			v.Ledger = append(v.Ledger, entries...)
			if v.Torn == nil {
				v.Torn = torn
			}
		}
	}
	return v, nil
}

// OperatorPending reports whether op still applies to st: it resolves the
// decided checkpoint (same id, label and txn), which is not committed, and
// st records no resolution of it at or after op.At.
func OperatorPending(st *checkpoint.State, op *coordlog.Operator) bool {
	d := st.Decided
	if d == nil || d.Committed || d.ID != op.Checkpoint {
		return false
	}
	table := op.Table
	if table == "" {
		table = st.Owner.TableName()
	}
	t := d.SubTxn(table, op.Sub)
	if t == nil || t.Committed || t.Label != op.Label || t.TxnID != op.TxnID {
		return false
	}
	for _, r := range st.Resolved {
		if r.CheckpointID == d.ID && r.Label == op.Label && r.Assumed == op.Assumed && !r.At.Before(op.At) {
			return false
		}
	}
	return true
}

// Where says where the view's state was read: the data dir, or the state
// topic and offset.
func (v *View) Where() string {
	if v.Kafka != nil {
		return fmt.Sprintf("kafka state topic %s (offset %d)", v.Kafka.StateTopic, v.Kafka.Offset)
	}
	return v.Dir
}
