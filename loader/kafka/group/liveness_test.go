package group

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 29: a member whose group session failed (franz-go's
// *kgo.ErrGroupSession: a join that timed out) says so at WARN with the
// group state DescribeGroups answers, clears its readiness and reports
// since when it is out (metrics, /status); its next assignment puts it
// back in the group.
func TestGroupSessionFailureWarnsWithGroupStateAndClearsReadiness(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	// Another member holds the group: DescribeGroups has a state to tell.
	other, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.ConsumerGroup("doris-sink-grp"), kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			other.PollFetches(ctx)
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if _, err := kc.WaitGroupStable(wctx, "doris-sink-grp", 1); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var readiness []bool
	var outs []time.Time
	var ins []string
	m := &Member{cfg: Config{Job: "grp", Group: "doris-sink-grp"}, log: slog.New(slog.NewJSONHandler(&logs, nil)),
		topic: coordlog.SlotTopic("grp"), slots: 2, owned: map[int]bool{}, jobs: map[int]*slotJob{}, suspended: map[int]int32{},
		rebuilds: map[int]int{}, cl: cl, hooks: Hooks{
			Ready:    func(r bool) { readiness = append(readiness, r) },
			GroupOut: func(since time.Time, _ error) { outs = append(outs, since) },
			GroupIn:  func(gen int32, owned []int) { ins = append(ins, fmt.Sprint(gen, owned)) },
		}}
	joinErr := &kgo.ErrGroupSession{Err: errors.New("unable to join group session: i/o timeout")}
	m.sessionFailed(context.Background(), cl, joinErr)
	m.sessionFailed(context.Background(), cl, joinErr)

	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var x map[string]any
		if json.Unmarshal([]byte(l), &x) == nil && strings.HasPrefix(fmt.Sprint(x["msg"]), "group mode: the member is not in the job's consumer group") {
			line = x
		}
	}
	if line == nil || line["level"] != "WARN" || fmt.Sprint(line["group_state"]) != "Stable, 1 member(s)" ||
		line["session_failures"] != float64(2) || !strings.Contains(fmt.Sprint(line["err"]), "i/o timeout") || line["out_since"] == nil {
		t.Fatalf("warning %v, want WARN with the group state, the failures, since when and the error; logs:\n%s", line, logs.String())
	}
	if len(readiness) != 2 || readiness[0] || readiness[1] {
		t.Errorf("readiness calls %v, want [false false]", readiness)
	}
	if len(outs) != 2 || outs[0].IsZero() || !outs[1].Equal(outs[0]) || m.sessionFailures != 2 {
		t.Fatalf("GroupOut hook calls %v (failures %d), want two, both out since the first failure", outs, m.sessionFailures)
	}
	m.owned[1] = true
	m.inGroup(4)
	if !slices.Equal(ins, []string{"4 [1]"}) {
		t.Errorf("after an assignment: GroupIn calls %v, want in the group at generation 4 with slot 1", ins)
	}
	if !m.outSince.IsZero() {
		t.Error("outSince not cleared by the assignment")
	}
}
