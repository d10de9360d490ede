package checkpoint

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// produce writes n records to every partition of the job's topic.
func produce(t *testing.T, j *jobtest.Job, n int) {
	t.Helper()
	cl, err := kgo.NewClient(append(j.KafkaOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(reslotParts) {
		for range n {
			recs = append(recs, &kgo.Record{Topic: jobtest.Topic, Partition: p, Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// joinSlots joins the job's consumer group subscribed to its slot topic
// (what a group-mode member does) and returns once it holds every slot;
// the returned function leaves the group (a dynamic member leaves at
// Close; a static one, kgo.InstanceID, would stay listed until its
// session timeout, as in Kafka).
func joinSlots(t *testing.T, j *jobtest.Job, group string, slots int) (*kgo.Client, func()) {
	t.Helper()
	assigned := make(chan int, 8)
	cl, err := kgo.NewClient(append(j.KafkaOpts(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(coordlog.SlotTopic(jobtest.Name)),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			select { // never block the group's management goroutine (Close waits for it)
			case assigned <- len(m[coordlog.SlotTopic(jobtest.Name)]):
			default:
			}
		}))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	select {
	case n := <-assigned:
		if n != slots {
			t.Fatalf("member holds %d slots, want %d", n, slots)
		}
	case <-time.After(time.Minute):
		t.Fatal("the member never got the slots")
	}
	return cl, func() {
		cancel()
		<-done
		cl.Close()
	}
}

// Issue 12 "Operators see the whole group": `checkpoint show` of a
// two-slot job lists both slots with their last decision and every
// partition with its slot, position, log end and lag; while a member of
// the job's group holds the slots it is named as their owner, after it
// left "none (stopped)". `checkpoint resolve --slot 1` writes the
// operator record of scope 1.
func TestShowGroupAndResolveSlot(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	j.Decide(0, 2, []map[int32]int64{slotOffsets(0, 2, -1)}, false)
	st1 := j.Decide(1, 2, []map[int32]int64{slotOffsets(1, 2, -20), slotOffsets(1, 2, -2)}, true)
	if err := setSlotTopic(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name), -1, 2); err != nil {
		t.Fatal(err)
	}
	produce(t, j, 110)
	group := reslotConfig(t, j).Kafka.Group
	cl, leave := joinSlots(t, j, group, 2)
	member := cl.GroupMetadata
	r := show(t, j)
	g := r.Group
	if g == nil || g.Slots != 2 || len(g.SlotViews) != 2 || len(g.Members) != 1 {
		t.Fatalf("group view %+v", g)
	}
	id, _ := member()
	for _, s := range g.SlotViews {
		if s.Owner == nil || s.Owner.MemberID != id || s.Owner.Host == "" {
			t.Errorf("slot %d owner %+v (%s), want member %s", s.Slot, s.Owner, s.OwnerText, id)
		}
	}
	if s := g.SlotViews[1]; s.Checkpoint != st1.Decided.ID || s.Committed || s.Label != st1.Decided.Label {
		t.Errorf("slot 1 %+v, want its uncommitted checkpoint %d", s, st1.Decided.ID)
	}
	if len(g.Partitions) != reslotParts {
		t.Fatalf("partitions %+v", g.Partitions)
	}
	for _, p := range g.Partitions {
		want := coordlog.SlotOf(jobtest.Topic, p.Partition, 2)
		pos := slotOffsets(want, 2, map[int]int64{0: -1, 1: -2}[want])[p.Partition]
		if p.Slot != want || p.Position == nil || *p.Position != pos || p.LogEnd == nil || *p.LogEnd != 110 ||
			p.Lag == nil || *p.Lag != 110-pos || p.Owner == jobstate.OwnerStopped {
			t.Errorf("partition %+v, want slot %d", p, want)
		}
	}
	leave()
	r = show(t, j)
	for _, s := range r.Group.SlotViews {
		if s.Owner != nil || s.OwnerText != jobstate.OwnerStopped {
			t.Errorf("after the member left: slot %d owner %+v %q", s.Slot, s.Owner, s.OwnerText)
		}
	}

	res := resolve(t, j, st1.Decided.ID, "--slot", "1", "--assume", "aborted", "--yes")
	if res.err != nil || res.res.Scope != "1" || res.res.Offset == nil || res.res.Label != st1.Decided.Label {
		t.Fatalf("resolve --slot 1: %v %+v", res.err, res.res)
	}
	v := stateView(t, j)
	if s := v.SlotByNumber(1); s.Operator == nil || !s.Pending || s.Operator.Scope != "1" || s.Operator.Assumed != cp.ResolvedAborted {
		t.Errorf("slot 1 operator %+v pending %v", s.Operator, s.Pending)
	}
	if s := v.SlotByNumber(0); s.Operator != nil {
		t.Errorf("slot 0 got an operator record: %+v", s.Operator)
	}
	if res := resolve(t, j, st1.Decided.ID, "--assume", "aborted", "--dry-run"); res.err == nil {
		t.Errorf("resolve of slot 1's checkpoint against slot 0 succeeded: %+v", res.res)
	}
}

// The human view of `checkpoint show` prints the writer-slot and the
// partition tables.
func TestShowGroupHumanView(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	for s := range 2 {
		j.Decide(s, 2, []map[int32]int64{slotOffsets(s, 2, 0)}, false)
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdShow(f, nil)
	cmd.SetArgs([]string{"-c", j.Config})
	cmd.SetOut(out)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Writer slots (2, consumer group", "Partitions:", jobtest.Topic + "/7", jobstate.OwnerStopped} {
		if !strings.Contains(s, want) {
			t.Errorf("human view lacks %q:\n%s", want, s)
		}
	}
}
