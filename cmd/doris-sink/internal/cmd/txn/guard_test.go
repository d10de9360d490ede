package txn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

type decideRun struct {
	out, errOut string
	err         error
}

// decide runs `txn <op> args... -c <job config>` as the operator would.
func decide(j *jobtest.Job, op Operation, args ...string) decideRun {
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdDecide(f, op, nil)
	cmd.SetArgs(append(args, "-c", j.Config))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SetContext(context.Background())
	err := cmd.Execute()
	return decideRun{out: out.String(), errOut: errOut.String(), err: err}
}

func wantOwnedRefusal(t *testing.T, r decideRun, instead string) {
	t.Helper()
	var oe *OwnedLabelError
	if !errors.As(r.err, &oe) {
		t.Fatalf("want a refusal, got %v (stdout %q, stderr %q)", r.err, r.out, r.errOut)
	}
	if oe.Job != jobtest.Name || oe.Checkpoint == 0 || oe.TxnID == 0 || !strings.Contains(r.err.Error(), instead) {
		t.Errorf("refusal %q (%+v) does not name job, checkpoint, txn and %q", r.err, oe, instead)
	}
}

// Issue 11: `txn commit --label` of an announced, undecided label was
// accepted, and the job then refused forever ("fencing violation … this
// store never decided it"). It is refused now, naming why and the command
// to use instead (also with --dry-run); running that command lets the job
// continue exactly once.
func TestTxnCommitOfAnnouncedLabelRefused(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	j := jobtest.New(t)
	j.CrashAt(loader.FailAfterPrecommit, 1, n, every) // checkpoint 2 precommitted, announced, undecided
	st := j.State()
	if len(st.Announced) == 0 {
		t.Fatalf("nothing announced: %+v", st)
	}
	l := st.Announced[len(st.Announced)-1].Label
	if s := j.Srv.LabelState(jobtest.DB, l); s != doris.TxnPrecommitted {
		t.Fatalf("announced label %s is %s, want PRECOMMITTED", l, s)
	}
	for _, args := range [][]string{{"--label", l, "--yes"}, {"--label", l, "--dry-run"}} {
		wantOwnedRefusal(t, decide(j, Commit, args...), "txn abort --label "+l)
	}
	if s := j.Srv.LabelState(jobtest.DB, l); s != doris.TxnPrecommitted {
		t.Fatalf("a refused commit changed the label to %s", s)
	}
	// The command the refusal names.
	r := decide(j, Abort, "--label", l, "--yes")
	if r.err != nil || !strings.Contains(r.errOut, "recovery aborts it too") {
		t.Fatalf("abort of the announced label: %v, stderr %q", r.err, r.errOut)
	}
	if s := j.Srv.LabelState(jobtest.DB, l); s != doris.TxnAborted {
		t.Fatalf("after abort the label is %s", s)
	}
	j.RunToEnd(n, every)
	j.CheckExactlyOnce(n)
}

// A decided txn must be committed, never aborted: `txn abort` of it is
// refused naming `txn commit <id>`; that commit is allowed (it is what the
// job's recovery does), and the job then continues exactly once.
func TestTxnAbortOfDecidedRefusedCommitAllowed(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	j := jobtest.New(t)
	j.CrashAt(loader.FailAfterDecide, 1, n, every) // checkpoint 2 decided, PRECOMMITTED
	d := j.State().Decided
	id := strconv.FormatInt(d.TxnID, 10)
	wantOwnedRefusal(t, decide(j, Abort, id, "--yes"), "txn commit "+id)
	wantOwnedRefusal(t, decide(j, Abort, "--label", d.Label, "--dry-run"), "txn commit "+id)
	if s := j.Srv.LabelState(jobtest.DB, d.Label); s != doris.TxnPrecommitted {
		t.Fatalf("a refused abort changed the label to %s", s)
	}
	r := decide(j, Commit, id, "--yes", "-o", "json")
	if r.err != nil || !strings.Contains(r.out, `"outcome": "committed"`) || !strings.Contains(r.errOut, "what the job's recovery does") {
		t.Fatalf("commit of the decided txn: %v, stdout %q, stderr %q", r.err, r.out, r.errOut)
	}
	j.RunToEnd(n, every)
	j.CheckExactlyOnce(n)
	if !j.State().Decided.Committed {
		t.Error("the job did not mark its decided checkpoint committed")
	}
}

// A doris-sink label without the owning job's config (no -c, or another
// job's) is refused unless --force; --force proceeds with a warning.
func TestTxnOwnedLabelNeedsJobConfigOrForce(t *testing.T) {
	t.Parallel()
	j := jobtest.New(t)
	j.CrashAt(loader.FailAfterPrecommit, 0, 5, 5)
	l := j.State().Announced[0].Label
	f, out, errOut := cmdutil.NewTestFactory(false)
	base := []string{"--fe", j.Srv.FEURL(), "--mysql", j.Srv.MySQLAddr(), "--db", jobtest.DB, "--label", l}
	run := func(args ...string) error {
		out.Reset()
		errOut.Reset()
		cmd := NewCmdDecide(f, Commit, nil)
		cmd.SetArgs(append(append([]string{}, base...), args...))
		cmd.SetOut(out)
		cmd.SetErr(errOut)
		cmd.SetContext(context.Background())
		return cmd.Execute()
	}
	if err := run("--dry-run"); err == nil || !strings.Contains(err.Error(), "pass that job's config (-c)") {
		t.Errorf("without the job's config: %v", err)
	}
	if err := run("--dry-run", "--force"); err != nil || !strings.Contains(errOut.String(), "Warning: --force") {
		t.Errorf("--force dry run: %v, stderr %q", err, errOut.String())
	}
	if s := j.Srv.LabelState(jobtest.DB, l); s != doris.TxnPrecommitted {
		t.Errorf("dry runs changed the label to %s", s)
	}
}
