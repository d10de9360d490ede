package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
)

type resolveRun struct {
	out, errOut string
	err         error
	res         ResolveResult
}

// resolve runs `checkpoint resolve -c <job> --checkpoint id` with args
// through cobra, as the operator would, with -o json.
func resolve(t *testing.T, j *jobtest.Job, id uint64, args ...string) resolveRun {
	t.Helper()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdResolve(f, nil)
	cmd.SetArgs(append([]string{"-c", j.Config, "--checkpoint", strconv.FormatUint(id, 10), "-o", "json"}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SetContext(context.Background())
	r := resolveRun{err: cmd.Execute()}
	r.out, r.errOut = out.String(), errOut.String()
	if r.err == nil {
		if err := json.Unmarshal(out.Bytes(), &r.res); err != nil {
			t.Fatalf("output %q: %v", r.out, err)
		}
	}
	return r
}

// refused checks that r is a *loader.ResolveConflictError naming held
// and the txn id, and that the store was left as it was.
func refused(t *testing.T, j *jobtest.Job, r resolveRun, held doris.TxnStatus, before *cp.State) {
	t.Helper()
	var ce *loader.ResolveConflictError
	if !errors.As(r.err, &ce) {
		t.Fatalf("want a refusal naming %s, got err %v, out %q", held, r.err, r.out)
	}
	if ce.Held.State != held || ce.Held.TxnID == 0 {
		t.Errorf("refusal %+v, want Doris holding %s with its txn id", ce, held)
	}
	msg := r.err.Error()
	for _, w := range []string{string(held), "txn " + strconv.FormatInt(ce.Held.TxnID, 10), "restart the job"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q does not say %q", msg, w)
		}
	}
	after := j.State()
	if len(after.Resolved) != len(before.Resolved) || after.Decided.Committed != before.Decided.Committed {
		t.Errorf("a refused resolve changed the store: %+v", after)
	}
}

// Issue 11: `checkpoint resolve --assume visible --yes` was accepted while
// Doris still knew the label as PRECOMMITTED or ABORTED (200 rows lost). An
// --assume is now checked against what Doris holds (docs/design.md §2 recovery
// table; docs/doris-facts.md §6.1, §6.2): contradicting assumptions are refused,
// naming state and txn id; agreeing ones are "nothing to do" (the job
// settles the label on restart); only UNKNOWN is recorded. --dry-run
// answers exactly what the real run does. Then the job finishes exactly
// once.
func TestResolveGuardsAgainstDoris(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	j := jobtest.New(t)
	j.CrashAt(loader.FailAfterDecide, 1, n, every) // checkpoint 2 decided, PRECOMMITTED
	before := j.State()
	id := before.Decided.ID
	if st := j.Srv.LabelState(jobtest.DB, before.Decided.Label); st != doris.TxnPrecommitted {
		t.Fatalf("decided label is %s, want PRECOMMITTED", st)
	}
	for _, args := range [][]string{{"--assume", "visible", "--yes"}, {"--assume", "aborted", "--yes"}, {"--assume", "visible", "--dry-run"}} {
		refused(t, j, resolve(t, j, id, args...), doris.TxnPrecommitted, before)
	}

	if j.Srv.TimeoutPrecommitted() != 1 { // "timeout by txn manager" (docs/doris-facts.md §5)
		t.Fatal("nothing timed out")
	}
	r := resolve(t, j, id, "--assume", "visible", "--yes")
	refused(t, j, r, doris.TxnAborted, before)
	if !strings.Contains(r.err.Error(), "timeout by txn manager") {
		t.Errorf("refusal %q does not give Doris's abort reason", r.err)
	}
	for _, args := range [][]string{{"--assume", "aborted", "--dry-run"}, {"--assume", "aborted", "--yes"}} {
		r := resolve(t, j, id, args...)
		if r.err != nil || r.res.Action != loader.ResolveNothing || r.res.Doris == nil || r.res.Doris.State != doris.TxnAborted ||
			!strings.Contains(r.res.Reason, "heal") {
			t.Errorf("%v on an ABORTED label: %v %+v, want nothing to do (the job heals it)", args, r.err, r.res)
		}
	}
	if after := j.State(); len(after.Resolved) != 0 {
		t.Errorf("nothing to do recorded something: %+v", after.Resolved)
	}

	if j.Srv.ExpireLabels(jobtest.DB) == 0 { // label_num_threshold / 12 h (docs/doris-facts.md §4)
		t.Fatal("nothing expired")
	}
	dry := resolve(t, j, id, "--assume", "aborted", "--dry-run")
	if dry.err != nil || dry.res.Action != loader.ResolveRecord || !dry.res.DryRun || dry.res.Doris.State != doris.TxnUnknown {
		t.Fatalf("dry run on an UNKNOWN label: %v %+v, want would record", dry.err, dry.res)
	}
	if len(j.State().Resolved) != 0 {
		t.Fatal("the dry run recorded")
	}
	real := resolve(t, j, id, "--assume", "aborted", "--yes")
	if real.err != nil || real.res.Action != dry.res.Action || real.res.Reason != dry.res.Reason || real.res.DryRun {
		t.Fatalf("real run %v %+v differs from its dry run %+v", real.err, real.res, dry.res)
	}
	if rs := j.State().Resolved; len(rs) != 1 || rs[0].Assumed != cp.ResolvedAborted {
		t.Fatalf("store resolutions %+v", rs)
	}
	again := resolve(t, j, id, "--assume", "aborted", "--dry-run")
	if again.err != nil || again.res.Action != loader.ResolveNothing || !strings.Contains(again.res.Reason, "already recorded") {
		t.Errorf("second resolve: %v %+v, want nothing to do", again.err, again.res)
	}
	j.RunToEnd(n, every)
	j.CheckExactlyOnce(n)
}

// Issue 11: --dry-run said it would resolve a checkpoint the store already
// marks committed, which the real run then refused. Both now say "nothing
// to do" (exit 0); --assume aborted of a committed checkpoint is refused by
// both.
func TestResolveDryRunMatchesRealRunOnCommitted(t *testing.T) {
	t.Parallel()
	const n, every = 10, 5
	j := jobtest.New(t)
	j.RunToEnd(n, every)
	st := j.State()
	if !st.Decided.Committed {
		t.Fatal("not committed")
	}
	for _, args := range [][]string{{"--assume", "visible", "--dry-run"}, {"--assume", "visible", "--yes"}} {
		r := resolve(t, j, st.Decided.ID, args...)
		if r.err != nil || r.res.Action != loader.ResolveNothing || !strings.Contains(r.res.Reason, "already marked committed") {
			t.Errorf("%v: %v %+v, want nothing to do", args, r.err, r.res)
		}
	}
	for _, args := range [][]string{{"--assume", "aborted", "--dry-run"}, {"--assume", "aborted", "--yes"}} {
		if r := resolve(t, j, st.Decided.ID, args...); r.err == nil || !strings.Contains(r.err.Error(), "twice") {
			t.Errorf("%v on a committed checkpoint: %v, want a refusal", args, r.err)
		}
	}
	// Human output says it in words.
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdResolve(f, nil)
	cmd.SetArgs([]string{"-c", j.Config, "--checkpoint", strconv.FormatUint(st.Decided.ID, 10), "--assume", "visible", "--dry-run"})
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "Nothing to do for checkpoint") {
		t.Errorf("human dry run: %v %q", err, out.String())
	}
	j.CheckExactlyOnce(n)
}

// A label Doris holds VISIBLE: --assume aborted would load it twice and is
// refused; --assume visible is nothing to do (the job marks it committed).
func TestResolveRefusesAbortedOfVisible(t *testing.T) {
	t.Parallel()
	const n, every = 10, 5
	j := jobtest.New(t)
	j.CrashAt(loader.FailAfterCommitBeforeLedger, 0, n, every) // committed in Doris, not in the store
	before := j.State()
	if before.Decided.Committed {
		t.Fatal("store already marks it committed")
	}
	refused(t, j, resolve(t, j, before.Decided.ID, "--assume", "aborted", "--yes"), doris.TxnVisible, before)
	if r := resolve(t, j, before.Decided.ID, "--assume", "visible", "--yes"); r.err != nil || r.res.Action != loader.ResolveNothing {
		t.Errorf("visible of a VISIBLE label: %v %+v, want nothing to do", r.err, r.res)
	}
	j.RunToEnd(n, every)
	j.CheckExactlyOnce(n)
}
