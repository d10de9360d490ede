package coordlog

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// ReadSnapshot reads the running store's state without fencing it: the
// store saves again after the read, and a missing state topic is a
// *NoStateError wrapping fs.ErrNotExist (and is not created by the read).
func TestReadSnapshotNeverFences(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	opts := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	_, err := ReadSnapshot(ctx, "snap", opts)
	var ns *NoStateError
	if !errors.As(err, &ns) || !errors.Is(err, fs.ErrNotExist) || ns.Topic != StateTopic("snap") {
		t.Fatalf("snapshot of a job that never ran: %v, want *NoStateError wrapping fs.ErrNotExist", err)
	}
	if td, _ := admin(t, c).ListTopics(ctx, StateTopic("snap")); td.Has(StateTopic("snap")) {
		t.Fatal("the read-only snapshot created the state topic")
	}
	s := mustOpenStore(t, storeConfig(c, "snap"))
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st, map[int32]int64{0: 5, 1: 2})
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	sn, err := ReadSnapshot(ctx, "snap", opts)
	if err != nil {
		t.Fatal(err)
	}
	got, src, rec, err := sn.StateOf("")
	if err != nil || got.Decided == nil || got.Decided.ID != 1 || src.Topic != "orders" || src.TopicID == "" ||
		rec.Incarnation != s.Log().Incarnation().Token {
		t.Fatalf("StateOf: %+v %+v %+v %v", got, src, rec, err)
	}
	if sc := sn.Scopes(); len(sc) != 1 || sc[0] != "0" {
		t.Errorf("Scopes = %v, want [0]", sc)
	}
	if _, _, _, err := sn.StateOf("7"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("StateOf(7): %v, want fs.ErrNotExist", err)
	}
	// The store was not fenced by the read: it saves and its fence check passes.
	st.Decided.Committed, st.Decided.CommittedAt = true, time.Now()
	if err := s.Save(ctx, st); err != nil {
		t.Fatalf("Save after a snapshot read: %v", err)
	}
	if err := s.CheckFenced(ctx); err != nil {
		t.Fatalf("CheckFenced after a snapshot read: %v", err)
	}
}

// An operator record is written under its own key and transactional id:
// the running store is not fenced, its state record is untouched, and
// PendingOperator (and the snapshot) return the newest one.
func TestWriteOperatorNeverFences(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	s := mustOpenStore(t, storeConfig(c, "op"))
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st, map[int32]int64{0: 5, 1: 2})
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(c, "op")
	at := time.Now().UTC().Truncate(time.Second)
	for _, assumed := range []string{checkpoint.ResolvedVisible, checkpoint.ResolvedAborted} {
		if _, err := WriteOperator(ctx, cfg, Operator{Kind: OperatorResolve, Checkpoint: 1, Label: st.Decided.Label,
			TxnID: st.Decided.TxnID, Assumed: assumed, By: "op@host", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	op, ok, err := s.PendingOperator(ctx)
	if err != nil || !ok || op.Assumed != checkpoint.ResolvedAborted || op.Checkpoint != 1 || op.TxnID != 101 ||
		op.By != "op@host" || !op.At.Equal(at) || op.Scope != "0" {
		t.Fatalf("PendingOperator = %+v %v %v", op, ok, err)
	}
	sn, err := ReadSnapshot(ctx, "op", cfg.ClientOpts)
	if err != nil {
		t.Fatal(err)
	}
	if sop, ok, err := sn.OperatorOf(""); err != nil || !ok || sop.Offset != op.Offset {
		t.Errorf("snapshot OperatorOf = %+v %v %v", sop, ok, err)
	}
	if sc := sn.Scopes(); len(sc) != 1 {
		t.Errorf("Scopes = %v: the operator key is not a writer scope", sc)
	}
	if err := s.CheckFenced(ctx); err != nil {
		t.Fatalf("CheckFenced after an operator write: %v", err)
	}
	st.Decided.Committed, st.Decided.CommittedAt = true, time.Now()
	if err := s.Save(ctx, st); err != nil {
		t.Fatalf("Save after an operator write: %v", err)
	}
	if got, err := s.Load(ctx); err != nil || !got.Decided.Committed {
		t.Fatalf("Load after an operator write: %+v %v", got, err)
	}
}
