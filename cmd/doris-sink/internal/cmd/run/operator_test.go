package run

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// readKafkaState reads the job's state topic read-only.
func (e *coordEnv) readKafkaState() (*checkpoint.State, *coordlog.Snapshot) {
	e.t.Helper()
	sn, err := coordlog.ReadSnapshot(context.Background(), coordJob, []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)})
	if err != nil {
		e.t.Fatal(err)
	}
	st, _, _, err := sn.StateOf("")
	if err != nil {
		e.t.Fatal(err)
	}
	return st, sn
}

// label-expiry-while-down with job.coordinator kafka, in process: a crash
// right after a decision, the txn timed out and its label expired while
// down. The start refuses (UnresolvedError); an operator record for
// another checkpoint is ignored; the operator record for the decided one
// (what `checkpoint resolve --assume aborted` writes) is applied at the
// next start: recorded in the state and the ledger, the checkpoint healed,
// every record loaded once.
func TestCoordinatorAppliesOperatorResolution(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.produce(10)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	job, err := e.buildWithDeps(dir, func(d *Deps) { d.Failpoints = fps })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("run: %v, want a crash after decide", err)
	}
	st, _ := e.readKafkaState()
	d := st.Decided
	if d == nil || d.Committed {
		t.Fatalf("state after the crash: %+v", st)
	}
	e.doris.TimeoutPrecommitted()
	if e.doris.ExpireLabels("db") == 0 {
		t.Fatal("nothing expired")
	}
	var ue *loader.UnresolvedError
	refused := func() {
		t.Helper()
		job, err := e.build(dir)
		if err == nil {
			err = job.Connector.Run(ctx)
		}
		if !errors.As(err, &ue) {
			t.Fatalf("start after label expiry: %v, want *loader.UnresolvedError", err)
		}
	}
	refused()
	cfg := coordlog.Config{Job: coordJob, ClientOpts: []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)}}
	stale := coordlog.Operator{Kind: coordlog.OperatorResolve, Checkpoint: d.ID + 5, Label: d.Label, TxnID: d.TxnID,
		Assumed: checkpoint.ResolvedAborted, By: "op@test", At: time.Now()}
	if _, err := coordlog.WriteOperator(ctx, cfg, stale); err != nil {
		t.Fatal(err)
	}
	refused() // a record that names another checkpoint changes nothing
	op := stale
	op.Checkpoint = d.ID
	if _, err := coordlog.WriteOperator(ctx, cfg, op); err != nil {
		t.Fatal(err)
	}
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
	after, _ := e.readKafkaState()
	if len(after.Resolved) != 1 || after.Resolved[0].CheckpointID != d.ID || after.Resolved[0].By != "op@test" ||
		after.Resolved[0].Assumed != checkpoint.ResolvedAborted {
		t.Errorf("resolutions in the Kafka state: %+v", after.Resolved)
	}
	entries, _, err := ledger.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var resolved, healed int
	for _, en := range entries {
		switch {
		case en.Event == ledger.EventResolved && en.Checkpoint == d.ID:
			resolved++
		case en.Event == ledger.EventHealed && en.Checkpoint == d.ID:
			healed++
		}
	}
	if resolved != 1 || healed != 1 {
		t.Errorf("ledger: %d resolved and %d healed entries of checkpoint %d, want 1 and 1", resolved, healed, d.ID)
	}
	// Applied once: a restart finds it settled and changes nothing.
	e.produce(2)
	e.runToEnd(dir)
	if again, _ := e.readKafkaState(); len(again.Resolved) != 1 {
		t.Errorf("the operator record was applied again: %+v", again.Resolved)
	}
	e.checkExactlyOnce(0)
}
