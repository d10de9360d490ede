package loader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The sub-load tests route record i to table multiTable(i) with key
// subKey(i), the "source partition" of the record: with K = 4 and seven
// partitions, a checkpoint of six records touches several sub-loads of
// several tables, some sub-loads of a table and not others.
const subK = 4

func subKey(i int) uint64 { return uint64(i % 7) }

// subsK sets Config.SubLoads to k.
func subsK(k int) func(*loader.Config) { return func(c *loader.Config) { c.SubLoads = k } }

// driveSub is driveMulti writing with WriteToKey.
func driveSub(ctx context.Context, l *loader.Loader, from, n, every int) error {
	return driveRows(ctx, l, from, n, every, func(i int) error { return l.WriteToKey(ctx, multiTable(i), subKey(i), row(i)) })
}

// crashRunSub is crashRunMulti writing with WriteToKey.
func (e *env) crashRunSub(ctx context.Context, fps *loader.Failpoints, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	e.crashRunWith(ctx, driveSub, fps, n, every, mut...)
}

// runToEndSub is runToEndMulti writing with WriteToKey.
func (e *env) runToEndSub(ctx context.Context, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	e.runToEndWith(ctx, driveSub, n, every, mut...)
}

// touchedSubs returns the sorted "db.table/sub" txns records [from, to)
// route to with k sub-loads.
func touchedSubs(from, to, k int) []string {
	var names []string
	for i := from; i < to; i++ {
		if n := fmt.Sprintf("%s.%s/%d", testDB, multiTable(i), int(subKey(i))%k); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// checkSubDecisions checks every decision of e's store holds one txn per
// (table, sub-load) its range touched, labelled BuildSub(…, sub), with
// Subs = k, all committed.
func (e *env) checkSubDecisions(n, every, k int) {
	e.t.Helper()
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := st.Validate(); err != nil {
		e.t.Fatal(err)
	}
	decisions := append(slices.Clone(st.History), *st.Decided)
	if len(decisions) != n/every {
		e.t.Fatalf("%d decisions, want %d", len(decisions), n/every)
	}
	for c, d := range decisions {
		var got []string
		for _, tx := range d.Txns {
			got = append(got, fmt.Sprintf("%s/%d", tx.Table, tx.Sub))
			db, tbl, _ := checkpoint.SplitTable(tx.Table)
			lbl, err := label.BuildSub(e.job, db, tbl, "0", d.ID, tx.Sub)
			if err != nil || tx.Label != lbl || !tx.Committed || tx.Subs != k {
				e.t.Errorf("checkpoint %d txn %+v: want label %s, subs %d, committed", d.ID, tx, lbl, k)
			}
		}
		if want := touchedSubs(c*every, (c+1)*every, k); !slices.Equal(got, want) {
			e.t.Errorf("checkpoint %d txns %v, want %v", d.ID, got, want)
		}
	}
}

// With K = 4, every checkpoint has one txn per touched (table, sub-load),
// each with its sub-load label, and every row lands once.
func TestSubLoadsOneTxnPerTouchedSubLoad(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.runToEndSub(ctx, n, every, subsK(subK))
	e.checkMultiExactlyOnce(n)
	e.checkSubDecisions(n, every, subK)
	// Each txn's ledger entries name its sub-load.
	for _, en := range entriesOf(t, e.dir, 5, ledger.EventCommitted) {
		if l, err := label.Parse(en.Label); err != nil || l.Sub != en.Sub {
			t.Errorf("ledger entry %+v: sub %d, its label says %+v (%v)", en, en.Sub, l, err)
		}
	}
}

// For every cut point of docs/design.md §2, a crash with K = 4 sub-loads
// of five tables open (first hit, and later hits: some sub-loads begun or
// precommitted and others not), then a restart on the same store and
// emulator, leaves every row exactly once and no txn PREPARE or
// PRECOMMITTED in any table; every decision holds the txns its range
// routed to.
func TestSubLoadsCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	for _, fp := range loader.AllFailpoints {
		for _, skip := range []int{0, 2, 4} {
			t.Run(fmt.Sprintf("%s/skip%d", fp, skip), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e := newMultiEnv(t)
				fps := loader.NewFailpoints()
				h, err := fps.Arm(fp, loader.Crash().Skip(skip))
				if err != nil {
					t.Fatal(err)
				}
				e.crashRunSub(ctx, fps, n, every, subsK(subK))
				if h.Hits() != 1 || fps.Hits(fp) != skip+1 {
					t.Fatalf("failpoint %s acted %d times, passed %d times", fp, h.Hits(), fps.Hits(fp))
				}
				w := &invariantWatch{Doris: e.client, t: t, dir: e.dir, txnLabel: map[int64]string{}}
				e.doris = w
				e.runToEndSub(ctx, n, every, subsK(subK), func(c *loader.Config) { c.Store = &orderedStore{Store: c.Store, e: e} })
				e.checkMultiExactlyOnce(n)
				e.checkSubDecisions(n, every, subK)
			})
		}
	}
}

// fixedClock is a clock that stands still (After still fires).
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// K = 1 is the loader from before sub-loads, byte for byte: a run writing
// with WriteToKey (any keys) and SubLoads 1 leaves the same store and
// ledger as a run writing with WriteTo and SubLoads unset, with the
// four-field labels and no sub or subs field.
func TestSubLoadsOneIsUnchanged(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	ctx := context.Background()
	clock := func(c *loader.Config) { c.Clock = fixedClock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
	files := func(e *env) map[string][]byte {
		out := map[string][]byte{}
		ents, err := os.ReadDir(e.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range ents {
			if en.IsDir() || strings.HasSuffix(en.Name(), ".lock") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(e.dir, en.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if en.Name() == checkpoint.FileName {
				b = withoutIncarnations(t, b)
			}
			out[en.Name()] = b
		}
		return out
	}
	old := newMultiEnv(t)
	old.runToEndMulti(ctx, n, every, clock)
	sub := newMultiEnv(t)
	sub.runToEndSub(ctx, n, every, clock, subsK(1))
	sub.checkMultiExactlyOnce(n)
	want, got := files(old), files(sub)
	if len(want) == 0 {
		t.Fatal("no store files")
	}
	for name, w := range want {
		if g := got[name]; !bytes.Equal(g, w) {
			t.Errorf("%s differs with SubLoads 1:\n got %s\nwant %s", name, g, w)
		}
		if bytes.Contains(w, []byte(`"sub`)) {
			t.Errorf("%s has a sub field with one sub-load: %s", name, w)
		}
	}
	st, err := checkpoint.ReadFile(sub.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range st.Decided.Txns {
		db, tbl, _ := checkpoint.SplitTable(tx.Table)
		if lbl := fmt.Sprintf("%s:%s-%s:0:%d", sub.job, db, tbl, st.Decided.ID); tx.Label != lbl {
			t.Errorf("txn %+v: want the four-field label %s", tx, lbl)
		}
	}
}

// recordingDoris records the labels of the Stream Loads begun.
type recordingDoris struct {
	loader.Doris
	mu     sync.Mutex
	labels []string
}

func (r *recordingDoris) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	r.mu.Lock()
	r.labels = append(r.labels, req.Label)
	r.mu.Unlock()
	return r.Doris.StreamLoad(ctx, req, body)
}

// A heal of one aborted sub-load replays only it: Recover finds one txn of
// decision 2 (K = 4) ABORTED, the replay of [6, 12) begins a Stream Load
// under that txn's label only (the rows of the other sub-loads, committed,
// are skipped), the healed decision keeps every other txn as it was, and
// every row lands once.
func TestSubLoadsHealReplaysOnlyTheAbortedSubLoad(t *testing.T) {
	t.Parallel()
	const n, every = 18, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunSub(ctx, crashAt(t, loader.FailAfterDecide, 1), 12, every, subsK(subK)) // decision 2 made, not committed
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	if d.ID != 2 || d.Committed {
		t.Fatalf("setup: decided %+v", d)
	}
	// The victim: a sub-load of a table with more than one sub-load txn.
	var victim *checkpoint.Txn
	for i := range d.Txns {
		tx := &d.Txns[i]
		if tx.Sub > 0 && slices.ContainsFunc(d.Txns, func(o checkpoint.Txn) bool { return o.Table == tx.Table && o.Sub != tx.Sub }) {
			victim = tx
			break
		}
	}
	if victim == nil {
		t.Fatalf("setup: no table with two sub-load txns in %+v", d.Txns)
	}
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	rec := &recordingDoris{Doris: e.client}
	e.doris = rec
	var healed *checkpoint.Decision
	l := e.open(subsK(subK), func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{AfterDecide: func(id uint64) {
			if s, err := checkpoint.ReadFile(e.dir); err == nil && id == 2 {
				c := s.Decided.Clone()
				healed = &c
			}
		}}
	})
	recoverTo(t, ctx, l, every)
	if err := driveSub(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	var of2 []string
	for _, s := range rec.labels {
		if p, err := label.Parse(s); err == nil && p.Checkpoint == 2 {
			of2 = append(of2, s)
		}
	}
	if !slices.Equal(of2, []string{victim.Label}) {
		t.Fatalf("heal of checkpoint 2 began loads %v, want only the aborted sub-load's %s", of2, victim.Label)
	}
	if healed == nil {
		t.Fatal("the heal of checkpoint 2 was never decided")
	}
	if len(healed.Txns) != len(d.Txns) {
		t.Fatalf("healed decision has %d txns, want %d: %+v", len(healed.Txns), len(d.Txns), healed.Txns)
	}
	for i, tx := range healed.Txns {
		was := d.Txns[i]
		switch {
		case tx.Table == victim.Table && tx.Sub == victim.Sub:
			if tx.Healed != 1 || tx.TxnID == victim.TxnID || tx.Label != victim.Label || tx.Subs != subK {
				t.Errorf("healed txn %+v, want healed 1, a new txn id, label %s", tx, victim.Label)
			}
		case tx.TxnID != was.TxnID || tx.Healed != 0 || tx.Label != was.Label:
			t.Errorf("heal changed txn %+v (was %+v)", tx, was)
		}
	}
}

// Config.SubLoads and Target.SubLoads are checked: 1 to 256.
func TestSubLoadsConfigRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, k := range []int{-1, 257} {
		cfg := e.config(subsK(k))
		if _, err := loader.New(e.client, cfg); err == nil || !strings.Contains(err.Error(), "doris.sub_loads") {
			t.Errorf("SubLoads %d: New = %v, want a doris.sub_loads error", k, err)
		}
		cfg.Store.Close()
	}
	cfg := e.config(func(c *loader.Config) { c.Tables = []loader.Target{{Table: "other", SubLoads: 300}} })
	defer cfg.Store.Close()
	if _, err := loader.New(e.client, cfg); err == nil || !strings.Contains(err.Error(), "sub-loads 300") {
		t.Errorf("Target.SubLoads 300: New = %v", err)
	}
}

// Labels Doris forgot are resolved per sub-load: after the precommitted
// sub-loads of decision 2 (K = 4) timed out and every label expired, each
// Recover stops at one unresolved txn (*UnresolvedError naming its label);
// the operator resolves that table's sub-load as aborted (ResolveTable +
// ResolveSub; without ResolveSub a table with several uncommitted
// sub-loads is refused), and the heal then replays exactly those sub-loads:
// every row lands once.
func TestSubLoadsResolvePerSubLoad(t *testing.T) {
	t.Parallel()
	const n, every = 18, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunSub(ctx, crashAt(t, loader.FailAfterDecide, 1), 12, every, subsK(subK))
	e.srv.TimeoutPrecommitted()
	if e.srv.ExpireLabels(testDB) == 0 {
		t.Fatal("nothing expired")
	}
	resolved, refused := 0, false
	for {
		l := e.open(subsK(subK))
		_, err := l.Recover(ctx)
		var ue *loader.UnresolvedError
		if !errors.As(err, &ue) {
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if err := driveSub(ctx, l, every, n, every); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			break
		}
		l.Close(ctx)
		if resolved > 3*subK*multiTables {
			t.Fatal("no progress resolving")
		}
		p, err := label.Parse(ue.Label)
		if err != nil {
			t.Fatal(err)
		}
		st, err := checkpoint.OpenFile(e.dir, e.owner())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := loader.PlanResolve(ctx, st, ue.CheckpointID, checkpoint.ResolvedAborted, loader.ResolveTable(ue.Table)); err != nil {
			if !strings.Contains(err.Error(), "--sub") {
				t.Fatalf("PlanResolve of table %s without a sub-load: %v", ue.Table, err)
			}
			refused = true
		}
		r, err := loader.ResolveAssume(ctx, st, ue.CheckpointID, checkpoint.ResolvedAborted, loader.ResolveBy("tester"),
			loader.ResolveLedger(e.dir), loader.ResolveTable(ue.Table), loader.ResolveSub(p.Sub))
		st.Close()
		if err != nil {
			t.Fatalf("resolve %s: %v", ue.Label, err)
		}
		if r.Sub != p.Sub || r.Label != ue.Label {
			t.Fatalf("resolution %+v, want sub-load %d label %s", r, p.Sub, ue.Label)
		}
		resolved++
	}
	if resolved < 2 || !refused {
		t.Fatalf("resolved %d txns (refused without --sub: %t); want several sub-loads, one table with two", resolved, refused)
	}
	e.checkMultiExactlyOnce(n)
}

// healOneSubLoad crashes after decision 2 (K = 4, records [6, 12)) and has
// Doris abort one txn of a sub-load > 0 of a table with several sub-load
// txns; it returns that txn.
func healOneSubLoad(t *testing.T, e *env, ctx context.Context) checkpoint.Txn {
	t.Helper()
	e.crashRunSub(ctx, crashAt(t, loader.FailAfterDecide, 1), 12, 6, subsK(subK))
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	for _, tx := range d.Txns {
		if tx.Sub > 0 && slices.ContainsFunc(d.Txns, func(o checkpoint.Txn) bool { return o.Table == tx.Table && o.Sub != tx.Sub }) {
			if err := e.client.AbortTxn(ctx, testDB, tx.TxnID); err != nil {
				t.Fatal(err)
			}
			return tx
		}
	}
	t.Fatalf("setup: no table with two sub-load txns in %+v", d.Txns)
	return checkpoint.Txn{}
}

// A heal routes its replay with the K the decision recorded, not the one
// configured now: decided with K = 4, restarted with K = 2, the heal loads
// the aborted sub-load under its decided label, and the checkpoints after
// it use K = 2. Every row lands once.
func TestSubLoadsHealUsesTheDecisionsK(t *testing.T) {
	t.Parallel()
	const n, every = 18, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	victim := healOneSubLoad(t, e, ctx)
	l := e.open(subsK(2))
	recoverTo(t, ctx, l, every)
	if err := driveSub(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(slices.Clone(st.History), *st.Decided) {
		for _, tx := range d.Txns {
			want := subK
			if d.ID > 2 {
				want = 2
			}
			if tx.Subs != want {
				t.Errorf("checkpoint %d txn %+v: subs %d, want %d", d.ID, tx, tx.Subs, want)
			}
			if d.ID == 2 && tx.Table == victim.Table && tx.Sub == victim.Sub && (tx.Healed != 1 || tx.Label != victim.Label) {
				t.Errorf("healed txn %+v, want healed once under %s", tx, victim.Label)
			}
		}
	}
}

// A replay whose keys route rows to other sub-loads than the decision's
// (the source's partitioning changed) is refused before anything is
// decided; restoring the routing heals it, every row once.
func TestSubLoadsHealRefusesChangedRouting(t *testing.T) {
	t.Parallel()
	const n, every = 18, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	healOneSubLoad(t, e, ctx)
	l := e.open(subsK(subK))
	recoverTo(t, ctx, l, every)
	var err error
	for i := every; i < 2*every && err == nil; i++ {
		err = l.WriteToKey(ctx, multiTable(i), subKey(i)+1, row(i)) // every record one partition over
	}
	if err == nil {
		err = l.Checkpoint(ctx, pos(2*every))
	}
	if !errors.Is(err, loader.ErrNeedRecover) || (len(healMismatches(err)) == 0 && !strings.Contains(err.Error(), "routing")) {
		t.Fatalf("heal with shifted keys: %v, want a refusal (ErrNeedRecover, routing changed)", err)
	}
	st, serr := checkpoint.ReadFile(e.dir)
	if serr != nil {
		t.Fatal(serr)
	}
	if st.Decided.ID != 2 || st.Decided.Healed != 0 {
		t.Fatalf("the refused heal decided something: %+v", st.Decided)
	}
	recoverTo(t, ctx, l, every)
	if err := driveSub(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
}

// withoutIncarnations re-encodes store file b without the FileStore
// incarnation ids, which are random at every open.
func withoutIncarnations(t *testing.T, b []byte) []byte {
	t.Helper()
	st, err := checkpoint.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	st.Incarnation = ""
	if st.Decided != nil {
		st.Decided.Incarnation = ""
	}
	for i := range st.History {
		st.History[i].Incarnation = ""
	}
	out, err := checkpoint.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
