package loader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ledgerCommittedRows totals the ledger's loaded rows of committed labels
// the way `doris-sink verify` and the chaos checker do: a label's rows come
// from its latest decided/healed entry, or its committed entry when that
// carries counts.
func ledgerCommittedRows(t *testing.T, dir string) int64 {
	t.Helper()
	entries, _, err := ledger.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	committed := map[string]bool{}
	for _, e := range entries {
		switch e.Event {
		case ledger.EventDecided, ledger.EventHealed:
			rows[e.Label] = e.RowsLoaded
		case ledger.EventCommitted:
			committed[e.Label] = true
			if e.RowsTotal > 0 {
				rows[e.Label] = e.RowsLoaded
			}
		}
	}
	var total int64
	for l := range committed {
		total += rows[l]
	}
	return total
}

// dropLastLedgerLine removes the ledger's last line, which must be the
// decided entry of checkpoint id: the ledger then is what a SIGKILL between
// the store's save of the decision and the ledger append leaves.
func dropLastLedgerLine(t *testing.T, dir string, id uint64) {
	t.Helper()
	path := filepath.Join(dir, ledger.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndexByte(bytes.TrimSuffix(b, []byte("\n")), '\n') + 1
	var last ledger.Entry
	if err := json.Unmarshal(b[i:], &last); err != nil {
		t.Fatalf("last ledger line %q: %v", b[i:], err)
	}
	if last.Checkpoint != id || last.Event != ledger.EventDecided {
		t.Fatalf("last ledger line is %s of checkpoint %d, want decided of %d", last.Event, last.Checkpoint, id)
	}
	if err := os.WriteFile(path, b[:i], 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkDecisionCounts checks the counts the store saved with the decision
// of checkpoint id (decided or in history).
func checkDecisionCounts(t *testing.T, dir string, id uint64, rows int64) {
	t.Helper()
	st, err := checkpoint.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var d *checkpoint.Decision
	if st.Decided != nil && st.Decided.ID == id {
		d = st.Decided
	}
	for i := range st.History {
		if st.History[i].ID == id {
			d = &st.History[i]
		}
	}
	switch {
	case d == nil:
		t.Fatalf("checkpoint %d is not in the store", id)
	case d.Counts == nil:
		t.Fatalf("decision %d has no counts", id)
	case d.Counts.RowsTotal != rows || d.Counts.RowsLoaded != rows || d.Counts.Bytes <= 0 || d.Counts.Attempts != 1:
		t.Fatalf("decision %d counts %+v, want %d rows total and loaded, bytes, 1 attempt", id, *d.Counts, rows)
	}
}

// Chaos campaign finding 3 (docs/reliability.md): the store's save that
// decides checkpoint N and the ledger's "decided" entry are two durable
// writes. A SIGKILL between them lost N's row counts for good (Doris cannot
// report a load's counters later): Recover committed N with a committed
// entry of 0 rows, and the ledger's committed total fell short of the
// table. The decision now carries its counts; Recover appends the missing
// decided entry from it, and the committed entry takes the same counts.
func TestDecidedInStoreButNotInLedger(t *testing.T) {
	t.Parallel()
	const rows, every = 10, 5
	cases := map[string]struct {
		// first runs until checkpoint id is decided in the store without
		// its ledger entry.
		first func(t *testing.T, ctx context.Context, e *env)
		id    uint64
	}{
		// The save's acknowledgement is lost: the loader stops right after
		// the durable save, as a kill there would.
		"lost-ack": {id: 2, first: func(t *testing.T, ctx context.Context, e *env) {
			st := &lostAckStore{match: decides(2, 0)}
			l := e.open(func(c *loader.Config) { st.Store, c.Store = c.Store, st })
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, rows, every); !errors.Is(err, errLostAck) || !errors.Is(err, loader.ErrNeedRecover) {
				t.Fatalf("drive: %v, want the lost acknowledgement, needing Recover", err)
			}
			if err := l.Close(ctx); err != nil {
				t.Logf("close after the failed decide: %v", err)
			}
		}},
		// A crash at after-decide, with the ledger cut back to before the
		// decided entry (which precedes the cut point).
		"sigkill-truncated-ledger": {id: 1, first: func(t *testing.T, ctx context.Context, e *env) {
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 0), rows, rows)
			dropLastLedgerLine(t, e.dir, 1)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			c.first(t, ctx, e)
			if got := entriesOf(t, e.dir, c.id, ledger.EventDecided); len(got) != 0 {
				t.Fatalf("setup: decided entries %+v, want none", got)
			}
			n := int64(rows / int(c.id))
			checkDecisionCounts(t, e.dir, c.id, n)
			// Two restarts: the first appends the missing entries, the
			// second finds them and appends nothing.
			e.restarts(ctx, 2, rows)
			decided := entriesOf(t, e.dir, c.id, ledger.EventDecided)
			committed := entriesOf(t, e.dir, c.id, ledger.EventCommitted)
			if len(decided) != 1 || len(committed) != 1 {
				t.Fatalf("checkpoint %d: decided %+v, committed %+v, want one of each", c.id, decided, committed)
			}
			checkCounts(t, "repaired decided entry", &decided[0], n, 0)
			checkCounts(t, "committed entry", &committed[0], n, 0)
			if decided[0].State != "PRECOMMITTED" || decided[0].DecidedAt.IsZero() || decided[0].Attempts != 1 ||
				!strings.Contains(decided[0].Note, "crash between") {
				t.Errorf("repaired decided entry %+v: want PRECOMMITTED, decided_at, 1 attempt, a note", decided[0])
			}
			if committed[0].State != "VISIBLE" || committed[0].TxnID != decided[0].TxnID ||
				strings.Contains(committed[0].Note, "unknown") {
				t.Errorf("committed entry %+v: want VISIBLE, the decided txn, known counts", committed[0])
			}
			if got := ledgerCommittedRows(t, e.dir); got != rows {
				t.Errorf("ledger committed rows %d, table holds %d", got, rows)
			}
			e.checkExactlyOnce(rows)
		})
	}
}

// The decide window of a heal: the save that decides the heal of
// checkpoint 1 (same label, new txn) is durable, its "healed" entry is not.
// Recover appends it, with the heal's counts and txn, then commits.
func TestHealDecidedInStoreButNotInLedger(t *testing.T) {
	t.Parallel()
	const rows = 6
	ctx := context.Background()
	e := newEnv(t)
	e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 0), rows, rows)
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("timed out %d txns, want 1", n)
	}
	st := &lostAckStore{match: decides(1, 1)}
	l := e.open(func(c *loader.Config) { st.Store, c.Store = c.Store, st })
	recoverTo(t, ctx, l, 0) // heal: replay from the start
	if err := drive(ctx, l, 0, rows, rows); !errors.Is(err, errLostAck) {
		t.Fatalf("heal: %v, want the lost acknowledgement", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Logf("close after the failed decide: %v", err)
	}
	if got := entriesOf(t, e.dir, 1, ledger.EventHealed); len(got) != 0 {
		t.Fatalf("setup: healed entries %+v, want none", got)
	}

	e.restarts(ctx, 2, rows)
	decided := entriesOf(t, e.dir, 1, ledger.EventDecided)
	healed := entriesOf(t, e.dir, 1, ledger.EventHealed)
	committed := entriesOf(t, e.dir, 1, ledger.EventCommitted)
	if len(decided) != 1 || len(healed) != 1 || len(committed) != 1 {
		t.Fatalf("decided %+v, healed %+v, committed %+v: want one of each", decided, healed, committed)
	}
	checkCounts(t, "repaired healed entry", &healed[0], rows, 0)
	checkCounts(t, "committed entry", &committed[0], rows, 0)
	if healed[0].TxnID == decided[0].TxnID || committed[0].TxnID != healed[0].TxnID {
		t.Errorf("txns: decided %d, healed %d, committed %d: want the heal's new txn committed",
			decided[0].TxnID, healed[0].TxnID, committed[0].TxnID)
	}
	if got := ledgerCommittedRows(t, e.dir); got != rows {
		t.Errorf("ledger committed rows %d, table holds %d", got, rows)
	}
	e.checkExactlyOnce(rows)
}

// A store saved by a doris-sink that did not record counts (Decision
// without "counts": the format is unchanged otherwise) still loads and
// recovers; entries written from such a decision say the counts are
// unknown, as before. When the old decided entry survived in the ledger,
// it still gives the ledger's totals.
func TestRecoverStoreWithoutCounts(t *testing.T) {
	t.Parallel()
	const rows = 5
	for _, keepDecided := range []bool{true, false} {
		name := "decided-entry-lost"
		if keepDecided {
			name = "decided-entry-kept"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 0), rows, rows)
			if !keepDecided {
				dropLastLedgerLine(t, e.dir, 1)
			}
			stripCounts(t, e)

			l := e.open()
			recoverTo(t, ctx, l, rows)
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			committed := entriesOf(t, e.dir, 1, ledger.EventCommitted)
			if len(committed) != 1 || committed[0].RowsTotal != 0 || committed[0].State != "VISIBLE" ||
				!strings.Contains(committed[0].Note, "row counts unknown") {
				t.Fatalf("committed entries %+v: want one, VISIBLE, counts unknown", committed)
			}
			decided := entriesOf(t, e.dir, 1, ledger.EventDecided)
			var want int64
			if keepDecided {
				want = rows
				if len(decided) != 1 {
					t.Fatalf("decided entries %+v, want the old one only", decided)
				}
				checkCounts(t, "old decided entry", &decided[0], rows, 0)
			} else if len(decided) != 1 || decided[0].RowsTotal != 0 || !strings.Contains(decided[0].Note, "row counts unknown") {
				t.Fatalf("decided entries %+v: want one appended by Recover, counts unknown", decided)
			}
			if got := ledgerCommittedRows(t, e.dir); got != want {
				t.Errorf("ledger committed rows %d, want %d", got, want)
			}
			e.checkExactlyOnce(rows)
		})
	}
}

// stripCounts rewrites e's store without any decision's counts, as a
// doris-sink that did not record them saved it, and checks the file has
// no "counts" key.
func stripCounts(t *testing.T, e *env) {
	t.Helper()
	fs, err := checkpoint.OpenFile(e.dir, e.owner())
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	st, err := fs.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decided == nil || st.Decided.Counts == nil {
		t.Fatalf("store before stripping: decided %+v, want counts", st.Decided)
	}
	st.Decided.Counts = nil
	for i := range st.Decided.Txns {
		st.Decided.Txns[i].Counts = nil
	}
	for i := range st.History {
		st.History[i].Counts = nil
		for j := range st.History[i].Txns {
			st.History[i].Txns[j].Counts = nil
		}
	}
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.dir, checkpoint.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"counts"`)) {
		t.Fatalf("stripped store still has counts:\n%s", b)
	}
}

// At-least-once, a load is committed when it returns and its decision is
// saved committed: a kill between that save and the ledger append loses
// the "committed" entry, which Recover now writes from the decision, with
// the load's counts (before, they were unknown).
func TestAtLeastOnceCommittedEntryFromDecision(t *testing.T) {
	t.Parallel()
	const rows, every = 10, 5
	ctx := context.Background()
	e := newEnv(t)
	st := &lostAckStore{match: func(prev, st *checkpoint.State) bool {
		return st.Decided != nil && st.Decided.ID == 2 && (prev == nil || prev.Decided == nil || prev.Decided.ID != 2)
	}}
	alo := func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce }
	l := e.open(alo, func(c *loader.Config) { st.Store, c.Store = c.Store, st })
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, rows, every); !errors.Is(err, errLostAck) {
		t.Fatalf("drive: %v, want the lost acknowledgement", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Logf("close after the failed decide: %v", err)
	}
	if got := entriesOf(t, e.dir, 2, ledger.EventCommitted); len(got) != 0 {
		t.Fatalf("setup: committed entries %+v, want none", got)
	}
	checkDecisionCounts(t, e.dir, 2, every)
	e.restarts(ctx, 2, rows, alo)
	committed := entriesOf(t, e.dir, 2, ledger.EventCommitted)
	if len(committed) != 1 {
		t.Fatalf("committed entries of checkpoint 2: %+v, want exactly one", committed)
	}
	checkCounts(t, "repaired committed entry", &committed[0], every, 0)
	if got := ledgerCommittedRows(t, e.dir); got != rows {
		t.Errorf("ledger committed rows %d, table holds %d", got, rows)
	}
	e.checkExactlyOnce(rows) // the position was saved with the load: nothing reloaded
}
