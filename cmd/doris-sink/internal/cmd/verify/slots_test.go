package verify

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// slotCommitted is committed() for writer slot scope: its label has the
// slot's scope, its txn id is the slot's.
func slotCommitted(scope string, id uint64, start, end map[int32]int64, rows int64, d fakeDoris) []ledger.Entry {
	es := committed(id, start, end, rows)
	lbl := fmt.Sprintf("job:demo.t:%s:%d", scope, id)
	txn := 1000*int64(scope[0]-'0'+1) + int64(id) // a txn id of its own per slot
	for i := range es {
		es[i].Label, es[i].TxnID = lbl, txn
	}
	d.states[lbl], d.txns[lbl] = doris.TxnVisible, txn
	return es
}

// Issue 12: in group mode every writer slot has its own ledger and its
// own checkpoint ids. verify reconciles each slot's checkpoints on their
// own (two slots' checkpoint 1 are two checkpoints, their ranges are
// contiguous per slot) and the table count once over every slot; a gap
// in one slot names it.
func TestReconcileSlots(t *testing.T) {
	t.Parallel()
	d := fakeDoris{states: map[string]doris.TxnStatus{}, txns: map[string]int64{}, keys: schema.DuplicateKeys, count: 40}
	var s0, s1 []ledger.Entry
	s0 = append(s0, slotCommitted("0", 1, nil, map[int32]int64{0: 10}, 10, d)...)
	s0 = append(s0, slotCommitted("0", 2, map[int32]int64{0: 10}, map[int32]int64{0: 20}, 10, d)...)
	s1 = append(s1, slotCommitted("1", 1, nil, map[int32]int64{1: 5}, 5, d)...)
	s1 = append(s1, slotCommitted("1", 2, map[int32]int64{1: 5}, map[int32]int64{1: 20}, 15, d)...)
	in := Input{Job: "job", DB: "demo", Table: "t", Doris: d, Kafka: fakeKafka{0: 20, 1: 20}, TableCount: true,
		Slots: []SlotInput{{Scope: "0", Entries: s0}, {Scope: "1", Entries: s1}}}
	rep := Reconcile(t.Context(), in)
	if err := rep.Err(); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("two clean slots: %v; findings %v", err, rep.Findings)
	}
	if len(rep.Checkpoints) != 4 || rep.Checkpoints[0].Scope != "0" || rep.Checkpoints[3].Scope != "1" || rep.Checkpoints[3].ID != 2 {
		t.Errorf("checkpoints %+v, want 2 per slot", rep.Checkpoints)
	}
	if rep.TableCount == nil || rep.TableCount.Status != TableCountOK || rep.TableCount.LedgerRows != 40 || rep.RowsLoaded != 40 {
		t.Errorf("table count %+v rows %d, want 40 over both slots", rep.TableCount, rep.RowsLoaded)
	}

	// Slot 1 skips [20, 25) of partition 1.
	s1 = append(s1, slotCommitted("1", 3, map[int32]int64{1: 25}, map[int32]int64{1: 30}, 5, d)...)
	in.Slots[1].Entries, in.Kafka, d.count = s1, fakeKafka{0: 20, 1: 30}, 45
	in.Doris = d
	rep = Reconcile(t.Context(), in)
	var ge *cmdutil.GapsError
	if !errors.As(rep.Err(), &ge) {
		t.Fatalf("Err() = %v, want the gap", rep.Err())
	}
	var found bool
	for _, f := range rep.Findings {
		if f.Kind == KindGap {
			found = f.Scope == "1" && f.Checkpoint == 3
		}
	}
	if !found {
		t.Errorf("findings %+v, want a gap of slot 1 checkpoint 3", rep.Findings)
	}
}

// verify of a group-mode job whose writers wrote no evidence topic (a
// doris-sink before issue 20) reads every slot's state from Kafka and each
// slot's ledger from job.data_dir/slot-<j>; a slot whose ledger is not on
// this machine is reported, not taken for a clean one.
func TestVerifyConfigReadsSlotLedgers(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, 4)
	st0 := j.Decide(0, 2, []map[int32]int64{{0: 5}}, false)
	j.Decide(1, 2, []map[int32]int64{{1: 7}}, false)
	deleteEvidenceTopic(t, j)
	dir := jobstate.SlotDataDir(j.Dir, 0, 2)
	lg, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st0.Decided
	if err := lg.Append(ledger.Entry{Event: ledger.EventCommitted, Checkpoint: d.ID, Label: d.Label, TxnID: d.TxnID,
		Ranges: []byte(`{"start":null,"end":` + string(d.End) + `}`)}); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := cmdutil.NewTestFactory(false)
	rep, err := VerifyConfigChecks(context.Background(), f, cfg, true, true, DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checkpoints) != 1 || rep.Checkpoints[0].Scope != "0" || rep.Checkpoints[0].Label != d.Label {
		t.Errorf("checkpoints %+v, want slot 0's checkpoint %d", rep.Checkpoints, d.ID)
	}
	var missing bool
	for _, f := range rep.Findings {
		missing = missing || (f.Scope == "1" && f.Kind == KindUnverifiable && strings.Contains(f.Message, "slot-1"))
	}
	if !missing {
		t.Errorf("findings %+v, want slot 1's missing ledger reported", rep.Findings)
	}
}

// deleteEvidenceTopic deletes the job's evidence topic: its decisions then
// look as a doris-sink before the evidence topic left them.
func deleteEvidenceTopic(t *testing.T, j *jobtest.Job) {
	t.Helper()
	cl, err := kgo.NewClient(j.KafkaOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).DeleteTopics(t.Context(), coordlog.EvidenceTopic(jobtest.Name))
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 20, rolling upgrade: slot 0 decided checkpoints 1 and 2 under a
// doris-sink without the evidence topic (its local ledger holds them),
// then 3 under this one (the evidence topic holds it); slot 1's owner
// wrote no evidence yet and its ledger is elsewhere. verify merges slot
// 0's two sources (labelled, contiguous, no gap) and reports slot 1's
// pre-evidence checkpoints as not verified here, never as clean or a gap.
func TestVerifyConfigRollingUpgradeMergesLedgerAndEvidence(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, 4)
	st0 := j.Decide(0, 2, []map[int32]int64{{0: 5}, {0: 8}}, false)
	j.Decide(1, 2, []map[int32]int64{{1: 7}}, false)
	deleteEvidenceTopic(t, j)
	lg, err := ledger.Open(jobstate.SlotDataDir(j.Dir, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(append([]checkpoint.Decision{}, st0.History...), *st0.Decided) {
		if err := lg.Append(ledger.Entry{Event: ledger.EventCommitted, Checkpoint: d.ID, Label: d.Label, TxnID: d.Txns[0].TxnID,
			Ranges: []byte(`{"start":` + orNull(d.Start) + `,"end":` + string(d.End) + `}`)}); err != nil {
			t.Fatal(err)
		}
	}
	lg.Close()
	j.Decide(0, 2, []map[int32]int64{{0: 12}}, false) // this doris-sink: the evidence topic
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := cmdutil.NewTestFactory(false)
	rep, err := VerifyConfigChecks(context.Background(), f, cfg, true, true, DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, c := range rep.Checkpoints {
		if c.Scope == "0" {
			ids = append(ids, c.ID)
		}
	}
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Errorf("slot 0 checkpoints %v, want [1 2 3] (ledger, then evidence)", ids)
	}
	var srcs []string
	for _, s := range rep.Sources {
		srcs = append(srcs, fmt.Sprintf("%s:%s:%d-%d", s.Scope, s.Source, s.From, s.To))
	}
	if got, want := strings.Join(srcs, " "), "0:evidence-topic:3-3 0:local-ledger:1-2"; got != want {
		t.Errorf("sources %q, want %q", got, want)
	}
	var slot1 bool
	for _, f := range rep.Findings {
		if f.Severity != SeverityWarning {
			t.Errorf("finding %s, want warnings only", f)
		}
		slot1 = slot1 || (f.Scope == "1" && strings.Contains(f.Message, "before it wrote the evidence topic"))
	}
	if !slot1 {
		t.Errorf("findings %v, want slot 1's pre-evidence checkpoints reported not verified here", rep.Findings)
	}
}

func orNull(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}

// Issue 20: after the source topic was deleted and created again, verify
// reports it (the evidence's topic ID is the old one), instead of exiting
// 0 over offsets of another topic.
func TestVerifyConfigRecreatedSourceTopicIsAFinding(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.Decide(0, 1, []map[int32]int64{{0: 0}}, false)
	cl, err := kgo.NewClient(j.KafkaOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteTopics(t.Context(), jobtest.Topic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(t.Context(), 1, -1, nil, jobtest.Topic); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := cmdutil.NewTestFactory(false)
	rep, err := VerifyConfigChecks(context.Background(), f, cfg, true, false, DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	got := findings(rep, KindTopicRecreated)
	if len(got) != 1 || got[0].Severity != SeverityError || !strings.Contains(got[0].Message, "source topic "+jobtest.Topic) {
		t.Fatalf("findings %v, want one topic-recreated error naming %s", rep.Findings, jobtest.Topic)
	}
	if rep.Err() == nil {
		t.Errorf("Err() = nil, want exit 1")
	}
}
