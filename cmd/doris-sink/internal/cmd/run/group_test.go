package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Two members of one job config (job.slots 4, 8 partitions) share the
// slots two each through the consumer group; both decide checkpoints of
// their own slots' partitions; every record is loaded exactly once.
func TestGroupTwoMembersShareSlots(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 4})
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 2, b: 2})
	e.produce(200)
	e.waitAllDecided()
	e.mu.Lock()
	_, per := e.decidedLocked()
	e.mu.Unlock()
	if per["a"] == 0 || per["b"] == 0 {
		t.Errorf("checkpoints decided per member %v, want both to decide", per)
	}
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// A member added mid-load takes half the slots; cooperative-sticky moves
// only those: the first member drains exactly the slots that move (their
// open checkpoints are decided and committed before the hand-over) and
// keeps the others running; every record is loaded exactly once.
func TestGroupMemberAddedMidLoad(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 4})
	e.produce(200)
	e.waitUntil("a decided 4 checkpoints", func() bool { _, per := e.decidedLocked(); return per["a"] >= 4 })
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 2, b: 2})
	e.mu.Lock()
	for s := range b.owned {
		// A decision in flight when b's join began the rebalance is
		// refused (REBALANCE_IN_PROGRESS): that slot is suspended, not
		// rebuilt before the new generation, so it has no job to drain
		// when it moves (b aborts what it left undecided).
		if a.drained[s]+a.refused[s] != 1 {
			t.Errorf("slot %d moved to b: a drained it %d times and had it refused %d times, want one of them once",
				s, a.drained[s], a.refused[s])
		}
	}
	for s := range a.owned {
		if a.drained[s] != 0 {
			t.Errorf("slot %d stayed with a but was drained %d times (cooperative: only moving slots are handed over)", s, a.drained[s])
		}
	}
	e.mu.Unlock()
	e.produce(200)
	e.waitAllDecided()
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// A member killed at a cut point (a failpoint crash after precommit: its
// txn stays PRECOMMITTED, nothing of it is cleaned up) is a static member
// (job.instance), so it does not leave the group: its slots move to the
// other member after kafka.session_timeout, whose slot jobs fence the dead
// writers and abort what they left undecided; every record is loaded
// exactly once.
func TestGroupMemberKilledSlotsMoveAfterSessionTimeout(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	a := e.startWith("a", ", instance: ia", "", []string{FailpointsEnv + "=after-precommit=crash"})
	e.ownership(map[*groupMember]int{a: 4})
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 2, b: 2})
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	e.produce(200)
	e.waitUntil("a crashed", func() bool { return a.ended })
	if !errors.Is(a.err, loader.ErrCrashed) && !errors.Is(a.err, errKilled) {
		t.Fatalf("a ended with %v, want the failpoint crash", a.err)
	}
	e.ownership(map[*groupMember]int{b: 4})
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("member b: %v", err)
	}
	e.checkExactlyOnce()
	txns, err := e.srv.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	aborted := 0
	for _, tx := range txns {
		switch tx.Status {
		case doris.TxnPrepare, doris.TxnPrecommitted:
			t.Errorf("txn %d (%s) left %s in Doris, want every txn finished", tx.ID, tx.Label, tx.Status)
		case doris.TxnAborted:
			aborted++
		}
	}
	if aborted == 0 {
		t.Error("no txn aborted: the crashed slot's PRECOMMITTED txn should be aborted by its inheritor")
	}
}

// A decision whose TxnOffsetCommit Kafka refuses for its generation
// (ILLEGAL_GENERATION, injected on the first decision as if the group had
// moved on) is aborted and never resent: the slot job is rebuilt from
// scratch (a new producer epoch; its recovery aborts the undecided
// checkpoint) and loads the range again under a new label; every record
// is loaded exactly once. The rebuild waits for the member's rejoin: an
// assignment of a newer generation than the refused stamp. Every decision
// carries the member id and the generation (a stamp of -1 or no member
// fails the test).
func TestGroupStaleGenerationNeverResent(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	type commit struct {
		txnID, member string
		gen           int32
		epoch         int16
		pid           int64
	}
	var mu sync.Mutex
	var seen []commit
	var refused *commit
	e.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Observe: true, Count: -1, When: func(req kmsg.Request) bool {
		r := req.(*kmsg.TxnOffsetCommitRequest)
		mu.Lock()
		seen = append(seen, commit{r.TransactionalID, r.MemberID, r.Generation, r.ProducerEpoch, r.ProducerID})
		mu.Unlock()
		return true
	}})
	e.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.IllegalGeneration, Count: 1,
		When: func(req kmsg.Request) bool {
			r := req.(*kmsg.TxnOffsetCommitRequest)
			mu.Lock()
			defer mu.Unlock()
			if refused == nil {
				refused = &commit{r.TransactionalID, r.MemberID, r.Generation, r.ProducerEpoch, r.ProducerID}
			}
			return true
		}})
	// A real broker refuses a stamp only after the group moved on, and the
	// member's next heartbeat learns it too (REBALANCE_IN_PROGRESS): it
	// rejoins, and the refused slot is rebuilt only once the assignment of
	// that newer generation includes it.
	e.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Heartbeat}, Err: kerr.RebalanceInProgress, Count: 1,
		When: func(kmsg.Request) bool {
			mu.Lock()
			defer mu.Unlock()
			return refused != nil
		}})
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 4})
	e.produce(200)
	e.waitAllDecided()
	e.waitUntil("the refused slot rebuilt", func() bool { return a.rebuilt >= 1 })
	if err := e.stop(a); err != nil {
		t.Fatalf("member a: %v", err)
	}
	e.checkExactlyOnce()
	mu.Lock()
	defer mu.Unlock()
	if refused == nil {
		t.Fatal("no decision was refused")
	}
	// The rejoin's rebalance may refuse other slots' decisions too
	// (REBALANCE_IN_PROGRESS, for real): each refusal, and only a refusal,
	// rebuilds its slot once.
	if n := a.loggedCount("group mode: slot decision refused"); a.rebuilt != n {
		t.Errorf("%d slot jobs rebuilt, want %d (one per refused decision)", a.rebuilt, n)
	}
	after := false
	for _, c := range seen {
		if c.member == "" || c.gen < 1 {
			t.Errorf("TxnOffsetCommit of %s stamped member %q generation %d: want the member's id and generation", c.txnID, c.member, c.gen)
		}
		if c == *refused {
			if after {
				t.Errorf("the refused decision of %s (producer %d epoch %d) was sent again", c.txnID, c.pid, c.epoch)
			}
			after = true
		}
	}
}

// A slot topic with another partition count than job.slots is refused
// naming both counts and the way out; nothing is loaded.
func TestGroupSlotTopicPartitionsRefused(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	if _, err := e.adm.CreateTopic(context.Background(), 3, 1, nil, coordlog.SlotTopic(groupJob)); err != nil {
		t.Fatal(err)
	}
	e.produce(10)
	a := e.start("a", "")
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	err := <-a.done
	var ste *SlotTopicError
	if !errors.As(err, &ste) || ste.Partitions != 3 || ste.Slots != 4 {
		t.Fatalf("run over a 3-partition slot topic with job.slots 4: %v, want *SlotTopicError 3 vs 4", err)
	}
	for _, want := range []string{"has 3 partitions but job.slots is 4", "checkpoint reslot", "--slots 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if rows, _ := e.srv.Rows("demo", "t"); len(rows) != 0 {
		t.Errorf("%d rows loaded, want none", len(rows))
	}
}

// Two members on one machine share job.data_dir: a slot's ledger still
// held by the other process (a former owner paused or still stopping) is
// waited for, not fatal: the slot job starts once the lock is released,
// and every record is loaded exactly once.
func TestGroupSlotLedgerHeldIsWaitedFor(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	held, err := ledger.Open(SlotDataDir(filepath.Join(e.dir, "data-a"), 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	a := e.start("a", "")
	a.tap.wait(t, "group mode: the slot's ledger is held by another process")
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	e.waitUntil("4 slot jobs running", func() bool { return a.starts == 4 })
	e.produce(100)
	e.waitAllDecided()
	if err := e.stop(a); err != nil {
		t.Fatalf("member a: %v", err)
	}
	e.checkExactlyOnce()
}

// A job that ran standalone (job.slots 1) started with job.slots 4 is
// refused before anything is loaded: slot 0's record holds the positions
// of every partition, which slots 1-3 would ignore (and re-read from
// kafka.start). The error names both counts and the reslot command.
func TestGroupStartOverStandaloneStateRefused(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 1)
	e.produce(40)
	s := e.start("s", "")
	e.waitAllDecided()
	if err := e.stop(s); err != nil {
		t.Fatalf("standalone run: %v", err)
	}
	e.slots = 4
	e.produce(40)
	// The standalone run created the slot topic with one partition: the
	// arbiter refuses the group start first, naming both counts.
	g := e.start("g", "")
	e.mu.Lock()
	g.mayFail = true
	e.mu.Unlock()
	err := <-g.done
	var ste *SlotTopicError
	if !errors.As(err, &ste) || ste.Partitions != 1 || ste.Slots != 4 || !strings.Contains(err.Error(), "checkpoint reslot") {
		t.Fatalf("group start over a standalone job: %v, want *SlotTopicError 1 partition vs job.slots 4 naming checkpoint reslot", err)
	}
	// Without the slot topic (a job last run before standalone starts
	// created it), the state records refuse it.
	if _, err := e.adm.DeleteTopic(context.Background(), coordlog.SlotTopic(groupJob)); err != nil {
		t.Fatal(err)
	}
	a := e.start("a", "")
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	err = <-a.done
	var sm *coordlog.SlotsMismatchError
	if !errors.As(err, &sm) || sm.Recorded != 1 || sm.Configured != 4 {
		t.Fatalf("group start over a standalone job: %v, want *coordlog.SlotsMismatchError 1 vs 4", err)
	}
	if !strings.Contains(err.Error(), "checkpoint reslot") {
		t.Errorf("error %q does not name the reslot command", err)
	}
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 40 {
		t.Errorf("%d rows, want the standalone run's 40 and nothing more", len(rows))
	}
}

// A slot writer fenced by another process that opened the slot's log (a
// newer owner the group does not know of) ends the member with exit 1 and
// an error naming the slot, the state topic and the transactional id; the
// other slot drains first, and nothing is loaded twice.
func TestGroupFencedSlotEndsMember(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 2)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.waitUntil("both slot jobs running", func() bool { return a.starts == 2 })
	cfg := coordlog.StoreConfig{
		Log:   coordlog.Config{Job: groupJob, Group: "doris-sink-" + groupJob, ClientOpts: []kgo.Opt{kgo.SeedBrokers(e.kc.ListenAddrs()...)}},
		Owner: checkpoint.Owner{Job: groupJob, DB: "demo", Table: "t", Source: "kafka:orders", Writer: "1"},
		Topic: "orders", Slots: 2,
	}
	newer, err := coordlog.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	e.produce(40)
	var runErr error
	select {
	case runErr = <-a.done:
	case <-time.After(90 * time.Second):
		t.Fatal("member a did not stop after its slot 1 writer was fenced")
	}
	if !errors.Is(runErr, checkpoint.ErrFenced) || cmdutil.ExitCode(runErr) != cmdutil.ExitError {
		t.Fatalf("member a: %v (exit %d), want a fencing error, exit 1", runErr, cmdutil.ExitCode(runErr))
	}
	for _, want := range []string{"writer slot 1", "state topic doris-sink.state.grp", "transactional id doris-sink.grp.1"} {
		if !strings.Contains(runErr.Error(), want) {
			t.Errorf("error %q does not name %q", runErr, want)
		}
	}
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		if seen[r[0].(int64)]++; seen[r[0].(int64)] > 1 {
			t.Errorf("id %v loaded twice", r[0])
		}
	}
}

// A member beyond job.slots is a hot standby: in the group, owning no
// slot, and ready (/readyz 200) all the same; it takes a slot over when a
// member leaves.
func TestGroupStandbyIsReadyAndTakesOver(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 1, b: 1})
	e.listen = "127.0.0.1:0"
	c := e.start("c", "")
	line := c.tap.wait(t, "metrics endpoint")
	e.waitUntil("c joined", func() bool { return c.assigns > 0 })
	e.ownership(map[*groupMember]int{a: 1, b: 1, c: 0})
	resp, err := http.Get(strings.TrimSuffix(fmt.Sprint(line["addr"]), "/metrics") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("standby /readyz %d, want 200", resp.StatusCode)
	}
	e.produce(40)
	if err := e.stop(a); err != nil {
		t.Fatalf("member a: %v", err)
	}
	e.ownership(map[*groupMember]int{b: 1, c: 1})
	e.produce(40) // both slots get records: c loads
	e.waitAllDecided()
	resp, err = http.Get(strings.TrimSuffix(fmt.Sprint(line["addr"]), "/metrics") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(body), "doris_sink_txns_total") {
		t.Errorf("the member's /metrics lacks the Doris series of its slot jobs (%v):\n%.2000s", err, body)
	}
	for _, m := range []*groupMember{b, c} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// A revoked slot whose drain cannot finish (Doris holds its precommit)
// is cancelled at the rebalance timeout minus the margin, so the member
// rejoins in time; its open checkpoint stays undecided and the slot's new
// owner aborts it; every record is loaded exactly once.
func TestGroupRevokeDrainBoundedByRebalanceTimeout(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	e.rebalance = "2s"
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.waitUntil("both slot jobs running", func() bool { return a.starts == 2 })
	hold, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Block: true, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.produce(20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hold.Wait(ctx, 2); err != nil {
		t.Fatalf("both slots' precommits never reached Doris: %v", err)
	}
	b := e.start("b", "")
	a.tap.wait(t, "group mode: a slot's drain outlasted its bound")
	hold.Remove()
	hold.Release()
	e.ownership(map[*groupMember]int{a: 1, b: 1})
	e.produce(20)
	e.waitAllDecided()
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// A revoked slot's drain is cut at its bound and its cancelled job then
// does not end (here it is held after its connector returned, until the
// test releases it): the revoke callback still returns within the
// rebalance timeout, with the slot no longer owned, the slot moves to b,
// and every record is loaded exactly once (issue 29: the callback waited
// for the job without limit and the group stalled).
func TestGroupRevokeDoesNotWaitForACancelledJobThatDoesNotEnd(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	e.rebalance = "2s"
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	e.slotStopped = func(m *groupMember, _ int, err error) {
		if m.name == "a" && errors.Is(err, context.Canceled) {
			<-release
		}
	}
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.waitUntil("both slot jobs running", func() bool { return a.starts == 2 })
	hold, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Block: true, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.produce(20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hold.Wait(ctx, 2); err != nil {
		t.Fatalf("both slots' precommits never reached Doris: %v", err)
	}
	b := e.start("b", "")
	a.tap.wait(t, "group mode: a slot's drain outlasted its bound")
	hold.Remove()
	hold.Release()
	// a's slot job is still held: the slot moves only if a's callback
	// returned without it.
	e.ownership(map[*groupMember]int{a: 1, b: 1})
	a.tap.wait(t, "group mode: a cancelled slot job did not end within its grace")
	e.produce(20)
	e.waitAllDecided()
	unblock()
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// A second signal aborts a member: its slot jobs are cancelled (open
// checkpoints aborted, nothing more decided) and run exits 130; the slots'
// next owner resumes from their last decisions, exactly once.
func TestGroupSecondSignalAborts(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	hold, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Block: true, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.produce(20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hold.Wait(ctx, 1); err != nil {
		t.Fatalf("no precommit reached Doris: %v", err)
	}
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	a.sigs <- syscall.SIGTERM // drains: the held precommit keeps the drain waiting
	a.sigs <- syscall.SIGTERM // aborts
	var runErr error
	select {
	case runErr = <-a.done:
	case <-ctx.Done():
		t.Fatal("member a did not end after two signals")
	}
	if !errors.Is(runErr, context.Canceled) || cmdutil.ExitCode(runErr) != cmdutil.ExitInterrupted {
		t.Fatalf("member a: %v (exit %d), want context.Canceled, exit %d", runErr, cmdutil.ExitCode(runErr), cmdutil.ExitInterrupted)
	}
	hold.Remove()
	hold.Release()
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{b: 2})
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("member b: %v", err)
	}
	e.checkExactlyOnce()
}
