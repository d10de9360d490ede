package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// pauseMember holds every group request (Heartbeat, JoinGroup, SyncGroup,
// LeaveGroup) of member name's membership client at the broker until
// resume is called, as a SIGSTOPped process would send none; held requests
// are then handled as usual (the zombie's first heartbeat learns it was
// expired).
func (e *groupEnv) pauseMember(name string) (resume func()) {
	prefix := memberClientID(name) + "-"
	released := make(chan struct{})
	var once sync.Once
	hold := func(member string) {
		if !strings.HasPrefix(member, prefix) {
			return
		}
		select {
		case <-released:
		default:
			e.kc.SleepControl(func() { <-released })
		}
	}
	for _, key := range []kmsg.Key{kmsg.Heartbeat, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.LeaveGroup} {
		e.kc.ControlKey(int16(key), func(r kmsg.Request) (kmsg.Response, error, bool) {
			e.kc.KeepControl()
			switch req := r.(type) {
			case *kmsg.HeartbeatRequest:
				hold(req.MemberID)
			case *kmsg.JoinGroupRequest:
				hold(req.MemberID)
			case *kmsg.SyncGroupRequest:
				hold(req.MemberID)
			case *kmsg.LeaveGroupRequest:
				for _, m := range req.Members {
					hold(m.MemberID)
				}
			}
			return nil, nil, false
		})
	}
	return func() { once.Do(func() { close(released) }) }
}

// joinsOf calls seen with the member ID of every JoinGroup member name's
// membership client sends from now on.
func (e *groupEnv) joinsOf(name string, seen func(memberID string)) {
	prefix := memberClientID(name) + "-"
	e.kc.ControlKey(int16(kmsg.JoinGroup), func(r kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		if req := r.(*kmsg.JoinGroupRequest); strings.HasPrefix(req.MemberID, prefix) {
			seen(req.MemberID)
		}
		return nil, nil, false
	})
}

// Issue 29: a member slow to rejoin (z, its hand-over held while it keeps
// heartbeating) keeps a rebalance in flight (b joins) past the session
// timeout of the member already waiting in its JoinGroup (a), then is
// paused (a zombie: no request at all) across its own session timeout
// and resumed. As with Kafka's coordinator, a stays in the group while it
// waits (a member with a request in purgatory is never expired), the
// round completes once z's session expires, a and b take every slot
// without any join of a failing, every record is loaded exactly once, and
// every member's SIGTERM exits 0. (On kfake alone, a was expired while
// waiting and its JoinGroup never answered: it failed after the rebalance
// timeout + 10 s with an i/o timeout.)
func TestGroupZombieResumedDuringRebalanceGroupStaysLive(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 6, 3)
	e.rebalance = "4s"
	held := make(chan struct{})
	release := make(chan struct{})
	var holdOnce sync.Once
	e.revoking = func(m *groupMember, _ []int) {
		if m.name != "z" {
			return
		}
		first := false
		holdOnce.Do(func() { first = true })
		if first {
			close(held)
			<-release
		}
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	await := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	z := e.start("z", "")
	e.ownership(map[*groupMember]int{z: 3})
	e.produce(60)
	a := e.start("a", "")
	await("z's hand-over to a", held) // z hands slots over and stalls in its hand-over, heartbeating

	// b joins: a rebalance z does not rejoin while its hand-over stalls;
	// a rejoins and waits.
	var aJoins []string
	var joinsMu sync.Mutex
	aJoined := make(chan struct{})
	var joinedOnce sync.Once
	e.joinsOf("a", func(id string) {
		joinsMu.Lock()
		aJoins = append(aJoins, id)
		joinsMu.Unlock()
		joinedOnce.Do(func() { close(aJoined) })
	})
	b := e.start("b", "")
	await("a's JoinGroup of the rebalance", aJoined)
	joinsMu.Lock()
	waiting := aJoins[0]
	joinsMu.Unlock()
	// The fault: a waits three of its session timeouts for z, then z
	// stops sending anything (SIGSTOP) until its own session expired.
	time.Sleep(3 * time.Second) // the length of the fault, not a synchronisation
	resume := e.pauseMember("z")
	defer resume()
	paused := time.Now()
	e.produce(60)

	e.waitUntil("a and b own every slot", func() bool { return len(a.owned)+len(b.owned) == 3 })
	took := time.Since(paused)
	if gi := e.kc.GroupInfo(e.groupName()); gi == nil || !hasMember(gi.Members, waiting) {
		t.Errorf("a's member %s, waiting in its JoinGroup while z stalled, is not in the group (%+v): it was expired while "+
			"its request was parked (Kafka keeps such a member)", waiting, gi)
	}
	resume()
	close(release)
	e.waitAllDecided()
	t.Logf("after z's pause, a and b owned every slot in %v and every record was decided in %v (session 1s + rebalance 4s)",
		took.Round(10*time.Millisecond), time.Since(paused).Round(10*time.Millisecond))
	for _, m := range []*groupMember{a, b} {
		m.tap.mu.Lock()
		for _, l := range m.tap.lines {
			if msg, _ := l["msg"].(string); msg == "group mode: membership client error" &&
				strings.Contains(fmt.Sprint(l["err"]), "join") {
				t.Errorf("member %s: a join of its failed: %v", m.name, l["err"])
			}
		}
		m.tap.mu.Unlock()
	}
	for _, m := range []*groupMember{z, a, b} {
		if err := e.stop(m); err != nil {
			t.Errorf("member %s: SIGTERM: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// groupName is the members' consumer group (kafka.group's default).
func (e *groupEnv) groupName() string { return "doris-sink-" + groupJob }

func hasMember(ms []kfake.GroupMember, id string) bool {
	for _, m := range ms {
		if m.MemberID == id {
			return true
		}
	}
	return false
}

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
	mt := metrics.New()
	cfg := &config.Config{}
	cfg.Job.Name, cfg.Kafka.Group = "grp", "doris-sink-grp"
	m := &member{cfg: cfg, d: Deps{Metrics: mt}, log: slog.New(slog.NewJSONHandler(&logs, nil)), topic: coordlog.SlotTopic("grp"),
		slots: 2, owned: map[int]bool{}, jobs: map[int]*slotJob{}, suspended: map[int]int32{}, rebuilds: map[int]int{},
		ready: func(r bool) { readiness = append(readiness, r) }, cl: cl}
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
	g := mt.Status().Membership
	if g == nil || g.InGroup || g.RebalancingSince == nil || g.SessionFailures != 2 || g.Group != "doris-sink-grp" {
		t.Fatalf("process group status %+v, want out of doris-sink-grp since the first failure, 2 failures", g)
	}
	m.owned[1] = true
	m.inGroup(4)
	if g := mt.Status().Membership; !g.InGroup || g.RebalancingSince != nil || g.Generation != 4 || !slices.Equal(g.Slots, []int{1}) {
		t.Errorf("after an assignment: %+v, want in the group at generation 4 with slot 1", g)
	}
	if !m.outSince.IsZero() {
		t.Error("outSince not cleared by the assignment")
	}
}
