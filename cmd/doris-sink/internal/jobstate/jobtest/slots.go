package jobtest

import (
	"context"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// OpenSlotStore opens writer slot j's Kafka store of a NewKafka job whose
// state records slots (fencing slot j's previous incarnation).
func (j *Job) OpenSlotStore(slot, slots int) (*coordlog.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := j.Owner()
	o.Writer = coordlog.SlotScope(slot)
	return coordlog.OpenStore(ctx, coordlog.StoreConfig{Log: coordlog.Config{Job: Name, ClientOpts: j.KafkaOpts()},
		Owner: o, Topic: Topic, Slots: slots})
}

// Decide records in slot j's store (the job recording slots) decisions
// of real Kafka positions: for each of ends, a checkpoint announced,
// decided with one txn of the job's table ending at it, and committed
// unless it is the last one and lastUncommitted. It returns the state.
func (j *Job) Decide(slot, slots int, ends []map[int32]int64, lastUncommitted bool) *checkpoint.State {
	j.T.Helper()
	s, err := j.OpenSlotStore(slot, slots)
	if err != nil {
		j.T.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	st, err := s.Load(ctx)
	if err != nil {
		j.T.Fatal(err)
	}
	var start []byte
	if st.Decided != nil {
		start = st.Decided.End
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, m := range ends {
		end, err := kafka.PositionOf(map[string]map[int32]int64{Topic: m}).MarshalJSON()
		if err != nil {
			j.T.Fatal(err)
		}
		a, err := st.Announce(at)
		if err != nil {
			j.T.Fatal(err)
		}
		if err := s.Save(ctx, st); err != nil {
			j.T.Fatal(err)
		}
		committed := !(lastUncommitted && i == len(ends)-1)
		txn := int64(1000*slot) + int64(a.ID)
		tx := checkpoint.Txn{Table: DB + "." + Table, Label: a.Label, TxnID: txn, Committed: committed}
		if committed {
			tx.CommittedAt = at
		}
		d := checkpoint.Decision{ID: a.ID, Label: a.Label, Start: start, End: end, DecidedAt: at, Txns: []checkpoint.Txn{tx}}
		st.Decide(d)
		if err := s.Save(ctx, st); err != nil {
			j.T.Fatal(err)
		}
		start = end
	}
	return st
}

// Announce records in slot j's store an announced, undecided checkpoint
// and returns its label.
func (j *Job) Announce(slot, slots int) string {
	j.T.Helper()
	s, err := j.OpenSlotStore(slot, slots)
	if err != nil {
		j.T.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	st, err := s.Load(ctx)
	if err != nil {
		j.T.Fatal(err)
	}
	a, err := st.Announce(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		j.T.Fatal(err)
	}
	if err := s.Save(ctx, st); err != nil {
		j.T.Fatal(err)
	}
	return a.Label
}
