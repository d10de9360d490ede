package checkpoint

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

const reslotParts = 8

func reslotConfig(t *testing.T, j *jobtest.Job) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func reslot(t *testing.T, j *jobtest.Job, req ReslotRequest) (*ReslotResult, error) {
	t.Helper()
	if req.Doris == nil {
		req.Doris = j.Client
	}
	req.By = "tester@host"
	req.Now = func() time.Time { return time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return Reslot(ctx, reslotConfig(t, j), req)
}

// offsets returns partition → 100+p+add for the partitions of slot j of
// slots.
func slotOffsets(j, slots int, add int64) map[int32]int64 {
	m := map[int32]int64{}
	for p := range int32(reslotParts) {
		if coordlog.SlotOf(jobtest.Topic, p, slots) == j {
			m[p] = 100 + int64(p) + add
		}
	}
	return m
}

func stateView(t *testing.T, j *jobtest.Job) *jobstate.View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := jobstate.Open(ctx, reslotConfig(t, j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func slotTopicCount(t *testing.T, j *jobtest.Job) int {
	t.Helper()
	n, err := slotTopicPartitions(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkResliced asserts the records after a reslot to n slots: slot j
// holds exactly the partitions SlotOf maps to it at want's offsets, in an
// empty committed decision numbered next, every record holds n, and a
// store of every new slot opens with job.slots n (and one with the old
// count is refused).
func checkResliced(t *testing.T, j *jobtest.Job, n int, want map[int32]int64, next uint64) {
	t.Helper()
	v := stateView(t, j)
	if v.SlotCount != n {
		t.Fatalf("recorded slots %d, want %d", v.SlotCount, n)
	}
	for _, s := range v.Slots {
		if s.Slots != n || s.Incarnation != coordlog.ReslotIncarnation {
			t.Errorf("scope %s records %d slots (incarnation %s), want %d by the reslot", s.Scope, s.Slots, s.Incarnation, n)
		}
	}
	for slot := range n {
		s := v.SlotByNumber(slot)
		if s == nil || s.Retired {
			t.Fatalf("slot %d: no active record (%+v)", slot, s)
		}
		d := s.State.Decided
		if d == nil || d.ID != next || !d.Empty || !d.Committed || s.State.NextID != next+1 || len(s.State.Announced) != 0 {
			t.Fatalf("slot %d: decided %+v next %d, want empty committed checkpoint %d, next %d", slot, d, s.State.NextID, next, next+1)
		}
		if d.Label != jobtest.Name+":"+jobtest.DB+"-"+jobtest.Table+":"+s.Scope+":"+itoa(next) {
			t.Errorf("slot %d label %s", slot, d.Label)
		}
		pos, ok, err := kafka.ParsePosition(d.End)
		if err != nil || !ok {
			t.Fatalf("slot %d end %s: %v", slot, d.End, err)
		}
		got := pos.Of(jobtest.Topic)
		for p := range int32(reslotParts) {
			o, has := got[p]
			mine := coordlog.SlotOf(jobtest.Topic, p, n) == slot
			if has != mine || (mine && o != want[p]) {
				t.Errorf("slot %d partition %d: recorded %v (%d), want mine=%v at %d", slot, p, has, o, mine, want[p])
			}
		}
		st, err := j.OpenSlotStore(slot, n)
		if err != nil {
			t.Fatalf("slot %d does not open with job.slots %d: %v", slot, n, err)
		}
		loaded, err := st.Load(context.Background())
		st.Close()
		if err != nil || loaded.Decided.ID != next {
			t.Fatalf("slot %d load: %+v %v", slot, loaded, err)
		}
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

// Issue 12 "Operators": a standalone job (one state record, no slot count)
// re-sliced to 4 slots: the dry run changes nothing; --yes writes every
// slot's positions (each partition from its old owner, slot 0), numbers
// the new decisions after the highest old id, records 4, fences the
// standalone writer, creates the slot topic with 4 partitions and writes
// a resliced ledger entry.
func TestReslotOneToFour(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, -50), slotOffsets(0, 1, 0)}, false)
	before := stateView(t, j)

	plan, err := reslot(t, j, ReslotRequest{Slots: 4, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.DryRun || plan.FromSlots != 1 || plan.ToSlots != 4 || len(plan.Slots) != 4 || plan.SlotTopicAction != SlotTopicCreate {
		t.Fatalf("plan %+v", plan)
	}
	if after := stateView(t, j); after.Kafka.End != before.Kafka.End || slotTopicCount(t, j) != -1 {
		t.Fatalf("the dry run wrote: state end %d → %d, slot topic %d", before.Kafka.End, after.Kafka.End, slotTopicCount(t, j))
	}

	old, err := j.OpenSlotStore(0, 1) // a live standalone writer
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	res, err := reslot(t, j, ReslotRequest{Slots: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.DryRun || len(res.StateOffsets) != 4 || len(res.Retired) != 0 {
		t.Fatalf("result %+v", res)
	}
	checkResliced(t, j, 4, slotOffsets(0, 1, 0), 3)
	if n := slotTopicCount(t, j); n != 4 {
		t.Errorf("slot topic has %d partitions, want 4", n)
	}
	if err := old.CheckFenced(context.Background()); !errors.Is(err, cp.ErrFenced) {
		t.Errorf("the standalone writer is not fenced: %v", err)
	}
	if _, err := j.OpenSlotStore(0, 1); !errors.As(err, new(*coordlog.SlotsMismatchError)) {
		t.Errorf("a member with job.slots 1 opened the re-sliced job: %v", err)
	}
	entries, _, err := ledger.ReadFile(j.Dir)
	if err != nil || len(entries) != 1 || entries[0].Event != ledger.EventResliced || !strings.Contains(entries[0].Note, "1 → 4") ||
		!strings.Contains(entries[0].Note, "tester@host") {
		t.Errorf("ledger %+v %v, want one resliced entry", entries, err)
	}
}

// 4 slots with different progress re-sliced to 2: each partition's
// position comes from the old slot that owned it, the new checkpoint ids
// follow the highest next id of any old slot, scopes 2 and 3 are retired
// (they record 2, so job.slots 2 opens), and the slot topic is recreated
// with 2 partitions.
func TestReslotFourToTwo(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	want := map[int32]int64{}
	for s := range 4 {
		var ends []map[int32]int64
		for k := range s + 1 { // slot s decides s+1 checkpoints
			ends = append(ends, slotOffsets(s, 4, int64(10*k)))
		}
		j.Decide(s, 4, ends, false)
		for p, o := range ends[len(ends)-1] {
			want[p] = o
		}
	}
	if err := setSlotTopic(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name), -1, 4); err != nil {
		t.Fatal(err)
	}
	res, err := reslot(t, j, ReslotRequest{Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Retired, ",") != "2,3" || res.SlotTopicAction != SlotTopicRecreate {
		t.Fatalf("result %+v", res)
	}
	checkResliced(t, j, 2, want, 5) // slot 3 handed out ids 1..4
	v := stateView(t, j)
	for _, scope := range []string{"2", "3"} {
		s := v.SlotByNumber(int(scope[0] - '0'))
		if s == nil || !s.Retired || s.Slots != 2 || s.State.Decided == nil {
			t.Errorf("scope %s: %+v, want retired, recording 2 slots, its decisions kept", scope, s)
		}
	}
	if n := slotTopicCount(t, j); n != 2 {
		t.Errorf("slot topic has %d partitions, want 2", n)
	}
	// Slots 0 and 1 continue their scopes: their old decisions are in
	// their history, so every label they decided is still the job's.
	for slot, n := range map[int]int{0: 1, 1: 2} {
		h := v.SlotByNumber(slot).State.History
		if len(h) != n || h[len(h)-1].ID != uint64(n) || !h[len(h)-1].Committed {
			t.Errorf("slot %d history %+v, want its %d old decisions", slot, h, n)
		}
	}
	pos, err := v.Positions()
	if err != nil {
		t.Fatal(err)
	}
	if len(pos[jobtest.Topic]) != reslotParts {
		t.Errorf("positions %v, want all %d partitions once", pos, reslotParts)
	}
}

// A slot whose last decision is not committed refuses the reslot, naming
// the slot and the label and the way out; nothing is written or fenced.
func TestReslotRefusesPendingDecision(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 2, []map[int32]int64{slotOffsets(0, 2, 0)}, false)
	st := j.Decide(1, 2, []map[int32]int64{slotOffsets(1, 2, 0)}, true)
	live, err := j.OpenSlotStore(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	before := stateView(t, j)
	_, err = reslot(t, j, ReslotRequest{Slots: 3})
	var re *ReslotRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "slot 1") || !strings.Contains(err.Error(), st.Decided.Label) ||
		!strings.Contains(err.Error(), "start the job to finish it, or resolve it") {
		t.Fatalf("err = %v, want a refusal naming slot 1 and label %s", err, st.Decided.Label)
	}
	if after := stateView(t, j); after.Kafka.End != before.Kafka.End || after.SlotCount != 2 {
		t.Errorf("a refused reslot wrote: end %d → %d, slots %d", before.Kafka.End, after.Kafka.End, after.SlotCount)
	}
	if err := live.CheckFenced(context.Background()); err != nil {
		t.Errorf("a refused reslot fenced the live member: %v", err)
	}
}

// An announced label of an undecided checkpoint that Doris holds
// PRECOMMITTED refuses the reslot (abort it first, as recovery would):
// dropping the announcement would leave an open txn nobody aborts.
func TestReslotRefusesPrecommittedAnnouncedLabel(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, 0)}, false)
	label := j.Announce(0, 1)
	ctx := context.Background()
	lr, err := j.Client.StreamLoad(ctx, doris.LoadRequest{DB: jobtest.DB, Table: jobtest.Table, Label: label, Format: "json",
		TwoPhaseCommit: true}, strings.NewReader(string(jobtest.Row(1))))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := j.Client.LoadState(ctx, jobtest.DB, label); err != nil || st != doris.TxnPrecommitted {
		t.Fatalf("label %s: %s %v", label, st, err)
	}
	_, err = reslot(t, j, ReslotRequest{Slots: 2})
	var re *ReslotRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), label) || !strings.Contains(err.Error(), "PRECOMMITTED") ||
		!strings.Contains(err.Error(), "txn "+strconv.FormatInt(lr.TxnID, 10)) || !strings.Contains(err.Error(), "abort it first") {
		t.Fatalf("err = %v, want a refusal naming label %s PRECOMMITTED (txn %d)", err, label, lr.TxnID)
	}
	if v := stateView(t, j); v.SlotCount != 1 {
		t.Errorf("refused reslot recorded %d slots", v.SlotCount)
	}
	// Aborted (what recovery does), the reslot goes through.
	if err := j.Client.AbortTxn(ctx, jobtest.DB, lr.TxnID); err != nil {
		t.Fatal(err)
	}
	if _, err := reslot(t, j, ReslotRequest{Slots: 2}); err != nil {
		t.Fatalf("after the abort: %v", err)
	}
	checkResliced(t, j, 2, slotOffsets(0, 1, 0), 3)
}

// A reslot that stops between its transaction and the slot topic change
// (a crash) leaves the records at the new count and the topic at the old
// one; run again, it changes only the topic (the records keep their
// offsets) and the job opens.
func TestReslotCrashBetweenTxnAndTopicChange(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	for s := range 2 {
		j.Decide(s, 2, []map[int32]int64{slotOffsets(s, 2, 0)}, false)
	}
	if err := setSlotTopic(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name), -1, 2); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crashed")
	res, err := reslot(t, j, ReslotRequest{Slots: 4, AfterWrite: func() error { return crash }})
	if !errors.Is(err, crash) {
		t.Fatalf("err = %v, want the crash", err)
	}
	if n := slotTopicCount(t, j); n != 2 {
		t.Fatalf("slot topic %d partitions before the rerun", n)
	}
	want := map[int32]int64{}
	for s := range 2 {
		for p, o := range slotOffsets(s, 2, 0) {
			want[p] = o
		}
	}
	checkResliced(t, j, 4, want, 2)
	again, err := reslot(t, j, ReslotRequest{Slots: 4})
	if err != nil {
		t.Fatal(err)
	}
	if again.SlotTopicAction != SlotTopicRaise || len(again.Slots) != 0 {
		t.Errorf("rerun %+v, want only the slot topic raised", again)
	}
	if n := slotTopicCount(t, j); n != 4 {
		t.Errorf("slot topic has %d partitions after the rerun, want 4", n)
	}
	v := stateView(t, j)
	for scope, off := range res.StateOffsets {
		if s := v.SlotByNumber(int(scope[0] - '0')); s == nil || s.Offset != off {
			t.Errorf("scope %s rewritten by the rerun: %+v, want offset %d", scope, s, off)
		}
	}
	if third, err := reslot(t, j, ReslotRequest{Slots: 4}); err != nil || third.SlotTopicAction != SlotTopicNone {
		t.Errorf("third run: %+v %v, want nothing to do", third, err)
	}
}

// A record written to the state topic between the reslot's read and its
// transaction (a member writing) aborts the transaction: nothing of the
// reslot is visible.
func TestWriteReslotRefusesAMovedStateTopic(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, 0)}, false)
	v := stateView(t, j)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, 5)}, false) // written after the read
	st := cp.NewState(v.State.Owner)
	_, err := coordlog.WriteReslot(context.Background(), coordlog.Config{Job: jobtest.Name, ClientOpts: j.KafkaOpts()}, 1,
		v.Kafka.End, []coordlog.SlotRecord{{Scope: "0", State: st}})
	var ce *coordlog.ReslotConflictError
	if !errors.As(err, &ce) || ce.Expected != v.Kafka.End {
		t.Fatalf("err = %v, want a conflict at %d", err, v.Kafka.End)
	}
	if after := stateView(t, j); after.State.Decided == nil || after.Slots[0].Incarnation == coordlog.ReslotIncarnation {
		t.Errorf("the aborted reslot record is visible: %+v", after.Slots[0])
	}
}

// A rebase of a group-mode job is refused (it would move one slot's
// positions only), naming the reslot round trip that does it; a job
// re-sliced to one slot rebases.
func TestRebaseRefusesGroupModeNamingReslot(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	for s := range 2 {
		j.Decide(s, 2, []map[int32]int64{slotOffsets(s, 2, 0)}, false)
	}
	ctx := context.Background()
	_, err := Rebase(ctx, reslotConfig(t, j), RebaseRequest{To: RebaseEarliest, AllPartitions: true, DryRun: true, Doris: j.Client})
	var re *RebaseRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "reslot --slots 1") || !strings.Contains(err.Error(), "2 writer slots") {
		t.Fatalf("err = %v, want a refusal naming the reslot round trip", err)
	}
	if _, err := reslot(t, j, ReslotRequest{Slots: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := Rebase(ctx, reslotConfig(t, j), RebaseRequest{To: RebaseEarliest, AllPartitions: true, Doris: j.Client})
	if err != nil || len(res.Partitions) != reslotParts {
		t.Fatalf("rebase after reslot to 1: %+v %v", res, err)
	}
	for _, p := range res.Partitions {
		if p.From == nil || *p.From != slotOffsets(coordlog.SlotOf(jobtest.Topic, p.Partition, 2), 2, 0)[p.Partition] || p.To != 0 {
			t.Errorf("partition %+v, want from its slot's position to 0", p)
		}
	}
}

// The command prints the plan without --yes and writes nothing.
func TestReslotCommandDryRunByDefault(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, 0)}, false)
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdReslot(f, nil)
	cmd.SetArgs([]string{"-c", j.Config, "--slots", "2"})
	cmd.SetOut(out)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "Would re-slice (dry run: add --yes to write) job "+jobtest.Name+" from 1 to 2") ||
		!strings.Contains(s, "create with 2 partitions") {
		t.Errorf("output:\n%s", s)
	}
	if v := stateView(t, j); v.SlotCount != 1 {
		t.Errorf("the dry run recorded %d slots", v.SlotCount)
	}
}

// The plan names the live members of the job's group (the job is not
// stopped): --yes would fence them.
func TestReslotPlanNamesLiveMembers(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	for s := range 2 {
		j.Decide(s, 2, []map[int32]int64{slotOffsets(s, 2, 0)}, false)
	}
	if err := setSlotTopic(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name), -1, 2); err != nil {
		t.Fatal(err)
	}
	cl, leave := joinSlots(t, j, reslotConfig(t, j).Kafka.Group, 2)
	defer leave()
	id, _ := cl.GroupMetadata()
	plan, err := reslot(t, j, ReslotRequest{Slots: 4, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.LiveMembers) != 1 || plan.LiveMembers[0].MemberID != id || len(plan.LiveMembers[0].Slots) != 2 {
		t.Errorf("live members %+v, want member %s holding 2 slots", plan.LiveMembers, id)
	}
}

// The operator commands read a slot's ledger where `run` writes it.
func TestSlotDataDirMatchesRun(t *testing.T) {
	t.Parallel()
	for j := range 3 {
		if got, want := jobstate.SlotDataDir("/d", j, 3), run.SlotDataDir("/d", j, 3); got != want {
			t.Errorf("slot %d: jobstate %s, run %s", j, got, want)
		}
	}
}

// An announced, undecided label Doris holds VISIBLE is a fencing
// violation (another writer on the prefix committed it): refused.
func TestReslotRefusesVisibleAnnouncedLabel(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 1, []map[int32]int64{slotOffsets(0, 1, 0)}, false)
	label := j.Announce(0, 1)
	ctx := context.Background()
	lr, err := j.Client.StreamLoad(ctx, doris.LoadRequest{DB: jobtest.DB, Table: jobtest.Table, Label: label, Format: "json",
		TwoPhaseCommit: true}, strings.NewReader(string(jobtest.Row(1))))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Client.CommitTxn(ctx, jobtest.DB, lr.TxnID); err != nil {
		t.Fatal(err)
	}
	_, err = reslot(t, j, ReslotRequest{Slots: 2})
	var re *ReslotRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "fencing violation") || !strings.Contains(err.Error(), label) {
		t.Fatalf("err = %v, want a fencing violation naming %s", err, label)
	}
}
