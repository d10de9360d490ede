package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Review finding 6, through the Kafka operator record: the start applying
// `checkpoint resolve --assume aborted` crashes between the store save and
// the "resolved" ledger entry (DORIS_SINK_FAILPOINTS
// resolve-before-ledger=crash). The next start does not apply the record
// again (the state has the resolution) and its recovery appends the
// missing entry: one "resolved" entry naming the operator, one heal, every
// record loaded once.
func TestCoordinatorOperatorCrashBeforeLedgerIsRepaired(t *testing.T) {
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
	op := coordlog.Operator{Kind: coordlog.OperatorResolve, Checkpoint: d.ID, Label: d.Label, TxnID: d.TxnID,
		Assumed: checkpoint.ResolvedAborted, By: "op@test", At: time.Now()}
	cfg := coordlog.Config{Job: coordJob, ClientOpts: []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)}}
	if _, err := coordlog.WriteOperator(ctx, cfg, op); err != nil {
		t.Fatal(err)
	}
	crash := loader.NewFailpoints()
	if _, err := crash.Arm(loader.FailResolveBeforeLedger, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.buildWithDeps(dir, func(d *Deps) { d.Failpoints = crash }); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("start applying the operator record with %s armed: %v, want ErrCrashed", loader.FailResolveBeforeLedger, err)
	}
	if after, _ := e.readKafkaState(); len(after.Resolved) != 1 {
		t.Fatalf("resolutions after the crash: %+v, want the operator's", after.Resolved)
	}
	e.runToEnd(dir)
	e.produce(2)
	e.runToEnd(dir) // a second start repairs nothing more
	e.checkExactlyOnce(0)
	entries, _, err := ledger.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var resolved []ledger.Entry
	healed := 0
	for _, en := range entries {
		switch {
		case en.Event == ledger.EventResolved && en.Checkpoint == d.ID:
			resolved = append(resolved, en)
		case en.Event == ledger.EventHealed && en.Checkpoint == d.ID:
			healed++
		}
	}
	if len(resolved) != 1 || healed != 1 {
		t.Fatalf("ledger: resolved entries %+v and %d healed of checkpoint %d, want 1 and 1", resolved, healed, d.ID)
	}
	if r := resolved[0]; r.Label != d.Label || r.TxnID != d.TxnID || !strings.Contains(r.Note, "operator assumed aborted (by op@test)") {
		t.Errorf("repaired resolved entry %+v, want label %s txn %d naming the operator", r, d.Label, d.TxnID)
	}
	if again, _ := e.readKafkaState(); len(again.Resolved) != 1 {
		t.Errorf("the operator record was applied again: %+v", again.Resolved)
	}
}
