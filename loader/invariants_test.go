package loader_test

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// invariantWatch checks docs/design.md §2 invariants 1 and 2 at the moment the
// loader calls Doris, against the store file on disk (checkpoint.ReadFile:
// what is durable, not what the loader holds in memory):
//
//   - invariant 1: a 2PC Stream Load begins only with a label the store
//     announces, or the decided label it heals;
//   - invariant 2: a txn is committed only when the store's decision names
//     it (label and txn id).
type invariantWatch struct {
	loader.Doris
	t   *testing.T
	dir string

	mu       sync.Mutex
	begins   int
	commits  int
	txnLabel map[int64]string // txn id → label, from the precommit answers
}

func (w *invariantWatch) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if req.TwoPhaseCommit {
		st := w.read()
		announced := slices.ContainsFunc(st.Announced, func(a checkpoint.Announcement) bool { return a.Label == req.Label })
		healing := false
		if d := st.Decided; d != nil {
			for _, tx := range d.Txns {
				healing = healing || (tx.Label == req.Label && !tx.Committed)
			}
		}
		if !announced && !healing {
			w.t.Errorf("invariant 1: Stream Load of %s begun while the store neither announces it (%+v) nor heals it (%+v)",
				req.Label, st.Announced, st.Decided)
		}
		w.mu.Lock()
		w.begins++
		w.mu.Unlock()
	}
	res, err := w.Doris.StreamLoad(ctx, req, body)
	if err == nil && res != nil && res.TxnID > 0 {
		w.mu.Lock()
		w.txnLabel[res.TxnID] = req.Label
		w.mu.Unlock()
	}
	return res, err
}

func (w *invariantWatch) CommitTxn(ctx context.Context, db string, txnID int64) error {
	st := w.read()
	w.mu.Lock()
	lbl := w.txnLabel[txnID]
	w.commits++
	w.mu.Unlock()
	decided := false
	if d := st.Decided; d != nil {
		for _, tx := range d.Txns {
			decided = decided || (tx.TxnID == txnID && (lbl == "" || tx.Label == lbl))
		}
	}
	if !decided {
		w.t.Errorf("invariant 2: commit of txn %d (label %q) while the store's decision is %+v", txnID, lbl, st.Decided)
	}
	return w.Doris.CommitTxn(ctx, db, txnID)
}

func (w *invariantWatch) read() *checkpoint.State {
	st, err := checkpoint.ReadFile(w.dir)
	if err != nil {
		w.t.Errorf("read the store: %v", err)
		return &checkpoint.State{}
	}
	return st
}

// orderedStore checks docs/design.md §2 invariant 3 at each save: a save that
// decides checkpoint N+1 (with a txn) is made only when every txn of the
// previous decided checkpoint N is VISIBLE at Doris (for one table: N is
// committed before N+1 is decided).
type orderedStore struct {
	checkpoint.Store
	e *env

	mu      sync.Mutex
	prev    *checkpoint.Decision
	decides int
}

func (s *orderedStore) Save(ctx context.Context, st *checkpoint.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := st.Decided; d != nil && !d.Empty && s.prev != nil && d.ID != s.prev.ID && !s.prev.Empty {
		s.decides++
		for _, tx := range s.prev.Txns {
			if got := s.e.labelStatus(tx.Label); got != doris.TxnVisible {
				s.e.t.Errorf("invariant 3: checkpoint %d decided while checkpoint %d (%s) is %s at Doris, want VISIBLE",
					d.ID, s.prev.ID, tx.Label, got)
			}
		}
	}
	if err := s.Store.Save(ctx, st); err != nil {
		return err
	}
	if st.Decided != nil {
		d := *st.Decided
		s.prev = &d
	}
	return nil
}

// labelStatus returns the status of the newest txn of lbl in the emulator
// ("" when none).
func (e *env) labelStatus(lbl string) doris.TxnStatus {
	e.t.Helper()
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	var st doris.TxnStatus
	for _, tx := range txns {
		if tx.Label == lbl {
			st = tx.Status
		}
	}
	return st
}

// docs/design.md §2 invariants 1–3, observed at each Doris call and store save
// through a run with a crash after a decision, a heal (the decided txn
// timed out, docs/doris-facts.md §5), and a background commit stuck until the next
// checkpoint's body streams; the table is then compared row by row.
func TestInvariantsObservedAtEachCall(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"events", "events_u"} {
		t.Run(table, func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 4
			ctx := context.Background()
			e := newEnv(t)
			e.table = table
			w := &invariantWatch{Doris: e.client, t: t, dir: e.dir, txnLabel: map[int64]string{}}
			e.doris = w
			ordered := func(c *loader.Config) { c.Store = &orderedStore{Store: c.Store, e: e} }
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 2), n, every)
			if e.srv.TimeoutPrecommitted() != 1 {
				t.Fatal("no precommitted txn to time out")
			}
			var ra recoverActions
			e.runToEnd(ctx, n, every, ordered, ra.knobs)
			if !ra.has("ABORTED:heal") {
				t.Errorf("recover actions %v, want ABORTED:heal", ra.got)
			}
			e.checkExactlyOnce(n)
			w.mu.Lock()
			defer w.mu.Unlock()
			// Every checkpoint with rows begins and commits at least once.
			if w.begins < n/every || w.commits < n/every {
				t.Errorf("watched %d begins and %d commits, want at least %d of each", w.begins, w.commits, n/every)
			}
		})
	}
}
