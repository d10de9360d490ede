package status

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
)

// Issue 29: status against a group member out of its consumer group
// shows the state "rebalancing" with how long and since when, and the
// member's failed group sessions; in the group, its generation and slots.
func TestStatusMemberRebalancingAndInGroup(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.SetReady(true)
	hs := httptest.NewServer(m.Handler())
	t.Cleanup(hs.Close)
	cfg := &config.Config{}
	cfg.Job.Name, cfg.Job.Slots, cfg.Kafka.Group = "orders-eos", 3, "doris-sink-orders-eos"
	cfg.Metrics.Listen = hs.Listener.Addr().String()

	m.GroupOut("doris-sink-orders-eos", time.Now().Add(-42*time.Second), errors.New("unable to join group session: i/o timeout"))
	res := &Result{}
	if js := askProcess(context.Background(), cfg, "demo.orders", res); js != nil {
		t.Fatalf("a group member lists no job yet, got %+v", js)
	}
	if !res.Process.Running || res.State != StateRebalancing || res.Membership == nil || res.Membership.RebalancingSince == nil {
		t.Fatalf("member out of its group: state %q process %+v membership %+v, want rebalancing", res.State, res.Process, res.Membership)
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	if err := printResult(f.IO, res, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rebalancing for 42s (since", "out of consumer group doris-sink-orders-eos for 42s",
		"1 failed group session(s); last: unable to join group session: i/o timeout"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}

	m.GroupIn("doris-sink-orders-eos", 9, []int{0, 2})
	res = &Result{}
	askProcess(context.Background(), cfg, "demo.orders", res)
	if res.State != metrics.StateRunning || res.Membership == nil || !res.Membership.InGroup {
		t.Fatalf("member in its group: state %q membership %+v", res.State, res.Membership)
	}
	f, out, _ = cmdutil.NewTestFactory(false)
	if err := printResult(f.IO, res, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "in consumer group doris-sink-orders-eos, generation 9, slots [0 2]") {
		t.Errorf("status output lacks the membership:\n%s", out)
	}

	// Another job's group: not this job's member.
	cfg.Kafka.Group = "other"
	res = &Result{}
	askProcess(context.Background(), cfg, "demo.orders", res)
	if res.Process.Running || res.Membership != nil {
		t.Errorf("a member of another group counted as this job's: %+v %+v", res.Process, res.Membership)
	}
}
