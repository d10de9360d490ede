package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// show runs `checkpoint show -c <job> -o json`.
func show(t *testing.T, j *jobtest.Job) ShowResult {
	t.Helper()
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdShow(f, nil)
	cmd.SetArgs([]string{"-c", j.Config, "-o", "json"})
	cmd.SetOut(out)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatalf("checkpoint show: %v", err)
	}
	var r ShowResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	return r
}

// Issue 12: with job.coordinator kafka `checkpoint show` read job.data_dir
// and found nothing, and `checkpoint resolve` could not help a stopped job.
// Now show reads the state topic read-only, and resolve writes an operator
// record under its own key and transactional id: the job's live
// incarnation is never fenced (it saves again afterwards), the record is
// shown as pending, and a repeat is "nothing to do".
func TestKafkaShowAndResolveThroughTheLog(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, n, every) // checkpoint 2 decided, PRECOMMITTED, in Kafka
	ctx := context.Background()
	live := j.OpenStore().(*coordlog.Store) // the job running again (its newest incarnation)
	defer live.Close()
	st, err := live.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := st.Decided.ID

	r := show(t, j)
	if r.Coordinator != "kafka" || r.Kafka == nil || r.Kafka.StateTopic != coordlog.StateTopic(jobtest.Name) ||
		r.Decided == nil || r.Decided.ID != id || r.Decided.TxnID != st.Decided.TxnID || r.Owner != st.Owner || r.Kafka.Source.TopicID == "" {
		t.Fatalf("show of a kafka job: %+v (kafka %+v), want decided checkpoint %d from the state topic", r, r.Kafka, id)
	}
	if r.Dir != j.Dir {
		t.Errorf("dir %q, want the data dir of the ledger %q", r.Dir, j.Dir)
	}

	j.Srv.TimeoutPrecommitted()
	if j.Srv.ExpireLabels(jobtest.DB) == 0 {
		t.Fatal("nothing expired")
	}
	dry := resolve(t, j, id, "--assume", "aborted", "--dry-run")
	if dry.err != nil || dry.res.Action != loader.ResolveRecord || dry.res.Offset != nil {
		t.Fatalf("dry run: %v %+v", dry.err, dry.res)
	}
	if r := show(t, j); r.Kafka.Operator != nil {
		t.Fatalf("the dry run wrote an operator record: %+v", r.Kafka.Operator)
	}
	real := resolve(t, j, id, "--assume", "aborted", "--yes")
	if real.err != nil || real.res.Action != loader.ResolveRecord || real.res.Offset == nil ||
		real.res.StateTopic != coordlog.StateTopic(jobtest.Name) || !strings.Contains(real.res.Reason, "next start") {
		t.Fatalf("resolve through the log: %v %+v", real.err, real.res)
	}
	r = show(t, j)
	if op := r.Kafka.Operator; op == nil || !r.Kafka.Pending || op.Checkpoint != id || op.Assumed != cp.ResolvedAborted ||
		op.Offset != *real.res.Offset || op.TxnID != st.Decided.TxnID || !strings.Contains(op.Doris, "UNKNOWN") {
		t.Fatalf("show after resolve: operator %+v pending %v", r.Kafka.Operator, r.Kafka.Pending)
	}
	if len(r.Resolved) != 0 {
		t.Errorf("the operator wrote the job's own state record: %+v", r.Resolved)
	}
	again := resolve(t, j, id, "--assume", "aborted", "--yes")
	if again.err != nil || again.res.Action != loader.ResolveNothing || !strings.Contains(again.res.Reason, "already written") {
		t.Errorf("second resolve: %v %+v, want nothing to do", again.err, again.res)
	}

	// The running incarnation was never fenced: its fence check passes and
	// it saves (the job keeps running until it stops or restarts).
	if err := live.CheckFenced(ctx); err != nil {
		t.Fatalf("the live job was fenced by the operator: %v", err)
	}
	if err := live.Save(ctx, st); err != nil {
		t.Fatalf("the live job cannot save after the operator's resolve: %v", err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	// The job's own loader (without run's start, which applies the record)
	// still refuses: the resolution is the owner's to apply.
	var ue *loader.UnresolvedError
	if err := j.Recover(); !errors.As(err, &ue) {
		t.Fatalf("recover before the owner applied the record: %v, want *loader.UnresolvedError", err)
	}
}

// The human view of a kafka job names the state topic and a pending
// operator record.
func TestKafkaShowHuman(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	f, out, _ := cmdutil.NewTestFactory(false)
	r := &ShowResult{Coordinator: "kafka", Kafka: &jobstate.Kafka{StateTopic: "doris-sink.state.j", Offset: 7, End: 9,
		Operator: &coordlog.Operator{Checkpoint: 3, Assumed: "aborted", By: "op@h", At: at, Offset: 8}, Pending: true}}
	if err := printShow(f.IO, r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"kafka state topic doris-sink.state.j, record at offset 7", "checkpoint 3 --assume aborted by op@h",
		"pending: the job applies it at its next start", "offset " + strconv.Itoa(8)} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
