package fileload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// A round decided (worker 0 already committed) before a kill -9 is
// committed when an input file's modification time changed
// before the rerun (touch, a backup tool, a still-open writer):
// committing decided txns by id reads no file, so the decision is settled
// before files are compared (otherwise worker 0's rows stay visible and
// the other txns PRECOMMITTED until Doris aborts them: a partial load
// after the decision, which docs/design.md §2 promises never happens).
func TestDecidedRoundCommittedDespiteTouchedFile(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 150, true)
	o := opts(c, store, a, csvFile(t, dir, "b.csv", 150, 200, true))
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailAfterCommitBeforeLedger, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash after worker 0 committed", err)
	}
	partial := len(keys(t, s))
	if partial == 0 || partial == 200 {
		t.Fatalf("%d rows visible after the crash: want worker 0's only", partial)
	}
	// Same content, new modification time.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = nil
	_, err := Run(ctx(t), o)
	if n := len(keys(t, s)); n != 200 {
		t.Fatalf("rerun = %v; %d rows visible (%d before it): the decided round is left partly committed", err, n, partial)
	}
	wantExactlyOnce(t, s, 200)
	wantSettled(t, s)
}

// After a split load committed its first round and crashed, a changed
// modification time of an input file makes the rerun fail with a
// *MismatchError. "Use another --store" would load every file again under
// a new load id (Prefix hashes the mtime: new labels, so Doris's label
// check cannot catch it) and the first round's rows twice, so the error
// must not advise it: it names the committed round and its labels, and
// advises restoring the file and rerunning with the store, which loads
// every row exactly once.
func TestMismatchAdviceDoesNotDuplicateCommittedRounds(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfPrecommitTimeout, 1000))
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 150, true)
	o := opts(c, store, a, csvFile(t, dir, "b.csv", 150, 300, true))
	o.Split, o.AssumedRate = true, 1 // rounds of about 1500 bytes
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailBeforeAnnounce, loader.Crash().Skip(1)); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash before the second round", err)
	}
	committed := len(keys(t, s))
	if committed == 0 || committed == 300 {
		t.Fatalf("%d rows committed by the first round: want part of the load", committed)
	}
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = nil
	var me *MismatchError
	_, err = Run(ctx(t), o)
	if !errors.As(err, &me) {
		t.Fatalf("rerun = %v, want the *MismatchError", err)
	}
	if me.Rounds != 1 || me.Rows != int64(committed) || len(me.Labels) == 0 {
		t.Fatalf("MismatchError rounds %d rows %d labels %v, want 1 round of %d rows and its labels",
			me.Rounds, me.Rows, me.Labels, committed)
	}
	msg := me.Error()
	for _, want := range []string{"use another --store", "remove " + store + " once"} {
		if strings.Contains(msg, want) {
			t.Fatalf("MismatchError %q advises %q, which loads the committed round twice", msg, want)
		}
	}
	for _, want := range append([]string{"would load them twice", "restore", "--store " + store, a}, me.Labels...) {
		if !strings.Contains(msg, want) {
			t.Fatalf("MismatchError %q does not say %q", msg, want)
		}
	}
	if n := len(keys(t, s)); n != committed {
		t.Fatalf("the refusal left %d rows visible, want the %d committed before", n, committed)
	}
	// Follow the error's advice: restore the file, rerun with the store.
	if err := os.Chtimes(a, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatalf("rerun after restoring %s: %v", a, err)
	}
	if !res.Resumed || res.TotalRows != 300 {
		t.Fatalf("rerun after restoring: resumed %t total_rows %d, want a resumed load of 300 rows", res.Resumed, res.TotalRows)
	}
	wantExactlyOnce(t, s, 300)
	wantSettled(t, s)
}

// A decided round whose txns Doris aborted (precommit timeout) after
// worker 0 committed needs a heal, which re-reads the pieces: with an input
// file changed, it is refused, naming the aborted txn, the file and the
// committed label, and nothing is sent; restoring the file and rerunning
// with the store heals it, every row exactly once.
func TestHealRefusedWhileFileChanged(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 150, true)
	o := opts(c, store, a, csvFile(t, dir, "b.csv", 150, 200, true))
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailAfterCommitBeforeLedger, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash after worker 0 committed", err)
	}
	partial := len(keys(t, s))
	if n := s.TimeoutPrecommitted(); n == 0 {
		t.Fatal("no PRECOMMITTED txn timed out")
	}
	before, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = nil
	_, err = Run(ctx(t), o)
	var me *MismatchError
	if !errors.As(err, &me) || me.Heal == "" || len(me.Labels) != 1 {
		t.Fatalf("rerun = %v, want a *MismatchError naming the heal and worker 0's committed label", err)
	}
	if msg := err.Error(); strings.Contains(msg, "use another --store") || !strings.Contains(msg, a) ||
		!strings.Contains(msg, me.Heal) || !strings.Contains(msg, me.Labels[0]) {
		t.Fatalf("rerun = %q: want the changed file, the aborted txn and the committed label, no new store", msg)
	}
	after, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || len(keys(t, s)) != partial {
		t.Fatalf("the refused heal left %d txns (%d before) and %d rows (%d before)", len(after), len(before),
			len(keys(t, s)), partial)
	}
	if err := os.Chtimes(a, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatalf("rerun after restoring %s: %v", a, err)
	}
	if res.Healed == 0 {
		t.Fatalf("rerun after restoring: %+v, want the aborted txns healed", res)
	}
	wantExactlyOnce(t, s, 200)
	wantSettled(t, s)
}

// Issue 30: a load Doris refused (every row filtered: the file was not
// what the headers said) decided nothing and aborted every txn; fixing the
// file and rerunning the same command (same store) plans the fixed file
// anew and loads it, instead of refusing the changed file.
func TestFixedFileAfterRefusedLoadIsPlannedAnew(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	bad := writeFile(t, dir, "a.csv", []byte("0,v-0\n1,v-1\n2,v-2\n")) // one column where the table has two: every row filtered
	o := opts(c, store, bad)
	if _, err := Run(ctx(t), o); err == nil || !strings.Contains(err.Error(), "nothing of it is visible") {
		t.Fatalf("Run of a file Doris filters = %v, want the aborted round", err)
	}
	if n := len(keys(t, s)); n != 0 {
		t.Fatalf("%d rows visible after the refused load", n)
	}
	csvFile(t, dir, "a.csv", 0, 200, true)
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatalf("rerun with the fixed file: %v (a load that decided nothing must not pin its files)", err)
	}
	if !res.Replanned || res.Rows != 200 {
		t.Fatalf("rerun %+v: want a replanned load of 200 rows", res)
	}
	wantExactlyOnce(t, s, 200)
	wantSettled(t, s)
	// Once a round is committed the files are pinned again.
	csvFile(t, dir, "a.csv", 0, 201, true)
	var me *MismatchError
	if _, err := Run(ctx(t), o); !errors.As(err, &me) {
		t.Fatalf("run after the committed load with a changed file = %v, want *MismatchError", err)
	}
}

// A crash before the decision leaves the round's txns PRECOMMITTED and its
// labels announced; when the file then changes, the rerun aborts those
// txns first (by label: the old plan's), then loads the file as it is now,
// every row exactly once.
func TestChangedFileAfterUndecidedCrashAbortsThenReplans(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 100, true)
	o := opts(c, store, a)
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailBeforeDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash before the decision", err)
	}
	txns, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	precommitted := 0
	for _, x := range txns {
		if x.Status == doris.TxnPrecommitted {
			precommitted++
		}
	}
	if precommitted == 0 {
		t.Fatal("no PRECOMMITTED txn after the crash before the decision")
	}
	csvFile(t, dir, "a.csv", 0, 150, true)
	o.Failpoints = nil
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatalf("rerun with the changed file: %v", err)
	}
	if !res.Replanned || res.Rows != 150 {
		t.Fatalf("rerun %+v: want a replanned load of 150 rows", res)
	}
	wantExactlyOnce(t, s, 150)
	wantSettled(t, s)
}

// Issue 30: a file named twice under two names (a symlink, a hard link)
// is refused before anything is sent: it would be loaded twice.
func TestFileNamedTwiceThroughSymlinkRefused(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir := t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 10, true)
	link := filepath.Join(dir, "link-to-a.csv")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard-a.csv")
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	for _, second := range []string{link, hard} {
		_, err := Run(ctx(t), opts(c, t.TempDir(), a, second))
		if err == nil || !strings.Contains(err.Error(), "named twice") || !strings.Contains(err.Error(), second) {
			t.Fatalf("Run(%s, %s) = %v, want the file refused as named twice", a, second, err)
		}
	}
	if n := len(keys(t, s)); n != 0 {
		t.Fatalf("%d rows loaded by refused loads", n)
	}
}
