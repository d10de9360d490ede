package fileload

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// Until the decision is durable nothing of the load is visible: with the
// load held right before the decision, every worker's txn is PRECOMMITTED
// and the table is empty; released, every row appears.
func TestNothingVisibleBeforeDecision(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	f := csvFile(t, t.TempDir(), "a.csv", 0, 200, true)
	o := opts(c, t.TempDir(), f)
	fp := loader.NewFailpoints()
	h, err := fp.Arm(loader.FailBeforeDecide, loader.Block())
	if err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	done := make(chan error, 1)
	go func() { _, err := Run(ctx(t), o); done <- err }()
	if err := h.Wait(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	if ks := keys(t, s); len(ks) != 0 {
		t.Fatalf("%d rows visible before the decision, want none", len(ks))
	}
	txns, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(txns) != 3 {
		t.Fatalf("%d txns before the decision, want 3", len(txns))
	}
	for _, x := range txns {
		if x.Status != doris.TxnPrecommitted {
			t.Fatalf("txn %d (%s) is %s before the decision, want PRECOMMITTED", x.ID, x.Label, x.Status)
		}
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantExactlyOnce(t, s, 200)
}

// W above max_running_txn_num_per_db is refused before anything begins.
func TestRefusesMoreWorkersThanRunningTxnCap(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfMaxRunningTxnPerDB, 2))
	o := opts(c, t.TempDir(), csvFile(t, t.TempDir(), "a.csv", 0, 10, true))
	_, err := Run(ctx(t), o)
	if err == nil || !strings.Contains(err.Error(), "max_running_txn_num_per_db 2") {
		t.Fatalf("Run with 3 workers and a cap of 2 = %v, want a refusal naming the cap", err)
	}
	if txns, _ := s.Txns("demo"); len(txns) != 0 {
		t.Fatalf("%d txns begun by a refused load, want none", len(txns))
	}
}

// A load estimated to outlive half the precommit timeout is refused before
// anything begins; with Split it loads in atomic rounds, each within the
// budget, every row once.
func TestLongLoadRefusedOrSplit(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfPrecommitTimeout, 100))
	f := csvFile(t, t.TempDir(), "a.csv", 0, 300, true) // 2680 bytes
	o := opts(c, t.TempDir(), f)
	o.AssumedRate = 1 // 3 workers × 1 B/s × 100 s / 2 = 150 bytes a round
	_, err := Run(ctx(t), o)
	if err == nil || !strings.Contains(err.Error(), "--split") || !strings.Contains(err.Error(), "stream_load_default_precommit_timeout_second") {
		t.Fatalf("Run = %v, want a refusal naming the precommit timeout and --split", err)
	}
	if txns, _ := s.Txns("demo"); len(txns) != 0 {
		t.Fatalf("%d txns begun by a refused load, want none", len(txns))
	}
	o.Split = true
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds < 10 {
		t.Fatalf("split load committed %d rounds, want at least 2680/150 ≈ 18", res.Rounds)
	}
	wantExactlyOnce(t, s, 300)
}

// A round whose first txn precommitted too long ago (the FE would abort it
// before the last commit) is aborted instead of decided.
func TestLateDecisionAborted(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfPrecommitTimeout, 600))
	o := opts(c, t.TempDir(), csvFile(t, t.TempDir(), "a.csv", 0, 50, true))
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	fp := loader.NewFailpoints()
	h, err := fp.Arm(loader.FailBeforeDecide, loader.Block())
	if err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), o); done <- err }()
	if err := h.Wait(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(550 * time.Second) // beyond 600 s less the 60 s margin
	mu.Unlock()
	h.Release()
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "precommitted 9m10s ago") {
		t.Fatalf("Run = %v, want the round aborted for its precommit age", err)
	}
	if ks := keys(t, s); len(ks) != 0 {
		t.Fatalf("%d rows visible, want none", len(ks))
	}
	wantSettled(t, s)
}

// Rows of one key in later file positions are committed after earlier
// ones (contiguous chunks per worker, commits in worker order), so a
// Unique Key table without a sequence column ends with the last version
// in the files, as a sequential load would.
func TestUniqueKeyKeepsFileOrder(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, "CREATE TABLE t (k BIGINT, v VARCHAR(64)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
	var b strings.Builder
	for v := range 60 {
		b.WriteString("1\tv" + time.Duration(v).String() + "\n") // one key, 60 versions: v0s, v1ns, ...
	}
	f := writeFile(t, t.TempDir(), "versions.csv", []byte(b.String()))
	o := opts(c, t.TempDir(), f)
	o.ChunkBytes = 16
	if _, err := Run(ctx(t), o); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := "v" + time.Duration(59).String(); len(rows) != 1 || rows[0][1] != want {
		t.Fatalf("rows %v, want the one key with its last version %s", rows, want)
	}
}

// A signal (ctx cancelled) before the decision aborts every txn of the
// round: nothing visible, nothing left running; the rerun loads it all.
func TestCancelBeforeDecisionAbortsAll(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	o := opts(c, t.TempDir(), csvFile(t, t.TempDir(), "a.csv", 0, 90, true))
	fp := loader.NewFailpoints()
	h, err := fp.Arm(loader.FailAfterPrecommit, loader.Block())
	if err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(runCtx, o); done <- err }()
	if err := h.Wait(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("cancelled Run = %v, want the round aborted", err)
	}
	if ks := keys(t, s); len(ks) != 0 {
		t.Fatalf("%d rows visible after a cancelled round, want none", len(ks))
	}
	wantSettled(t, s)
	h.Disarm()
	o.Failpoints = nil
	if _, err := Run(ctx(t), o); err != nil {
		t.Fatal(err)
	}
	wantExactlyOnce(t, s, 90)
}
