package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// revokeMargin is what a revoked slot job's drain leaves of the rebalance
// timeout for the member to rejoin in time; a drain still running then is
// cancelled (its open checkpoint stays undecided for the next owner).
const revokeMargin = 5 * time.Second

// DefaultSlotTopicCheck is how often a member checks its slot topic when
// Config.SlotTopicCheck is 0.
const DefaultSlotTopicCheck = 30 * time.Second

// DefaultRebalanceTimeout is the rebalance timeout of a member whose
// Config.RebalanceTimeout is 0 (franz-go's default).
const DefaultRebalanceTimeout = time.Minute

// Member is one member of a job's consumer group: New checks its Config,
// Run joins the group and runs a slot job for every slot the group assigns
// it, until Drain, a terminal error or the end of Run's context. A Member
// runs once.
type Member struct {
	cfg   Config
	log   *slog.Logger
	hooks Hooks
	topic string
	slots int
	drain chan struct{}
	// drainOnce closes drain.
	drainOnce sync.Once
	ran       bool
	ctx       context.Context // Run's: cancelled by an abort

	mu       sync.Mutex
	cl       *kgo.Client // the membership client (set by the first callback or after it is created)
	owned    map[int]bool
	jobs     map[int]*slotJob
	draining bool
	wg       sync.WaitGroup
	fatal    chan error // the first terminal slot-job error
	// gen is the generation of the last assignment callback.
	gen int32
	// suspended maps an owned slot whose decision was refused for the
	// membership to the generation of the refused stamp: its job is not
	// rebuilt until an assignment of a newer generation includes the slot
	// (the member rejoined); the local owned map alone is never enough.
	suspended map[int]int32
	// rebuilds counts the rebuilds of each owned slot since it was
	// assigned (the rebuild backoff grows with it).
	rebuilds map[int]int
	// outSince is when the member went out of the group (its session
	// failed, or it lost its slots), zero while in it; sessionFailures
	// counts the failed group sessions (liveness.go).
	outSince        time.Time
	sessionFailures int
}

// New returns the member of cfg, or an error naming the Config field that
// is missing or out of range.
func New(cfg Config) (*Member, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, log: cfg.Logger, hooks: cfg.Hooks, topic: coordlog.SlotTopic(cfg.Job), slots: cfg.Slots,
		drain: make(chan struct{}), owned: map[int]bool{}, jobs: map[int]*slotJob{}, fatal: make(chan error, 1),
		suspended: map[int]int32{}, rebuilds: map[int]int{}}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	return m, nil
}

// Drain asks the member to stop by choice (a signal): every slot job
// finishes its open checkpoint within the rebalance timeout, then the
// member leaves the group (Config.LeaveOnStop) and Run returns nil, or a
// *DrainCutError naming the slots whose drain was cut. A Drain before Run
// joined the group makes Run return nil having read nothing. Safe to call
// more than once, from any goroutine.
func (m *Member) Drain() { m.drainOnce.Do(func() { close(m.drain) }) }

// slotJob is the job of one owned slot, rebuilt after a refused decision
// while the slot stays owned.
type slotJob struct {
	slot    int
	rebuilt int // the slot's rebuilds before this job (0: first since assigned)
	cancel  context.CancelFunc
	done    chan struct{}
	drainCh chan struct{} // closed by the first drain

	mu      sync.Mutex
	job     SlotJob // nil while being built
	drained bool    // Drain was asked for (applied when the job is built)
}

// drain asks the slot job to finish its open checkpoint and stop.
func (s *slotJob) drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.drained && s.drainCh != nil {
		close(s.drainCh)
	}
	s.drained = true
	if s.job != nil {
		s.job.Drain()
	}
}

// set records the built job; it drains at once when asked before.
func (s *slotJob) set(j SlotJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job = j
	if s.drained {
		j.Drain()
	}
}

// built returns the slot's job, nil before it was built.
func (s *slotJob) built() SlotJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.job
}

// Run joins the group and runs the member until Drain (every slot job
// drains, then the member leaves the group: nil, or *DrainCutError), ctx
// ends (an abort: slot jobs are cancelled, nothing more is decided;
// ctx.Err()), Config.Kill is closed (ErrKilled), or a slot job fails with
// an error no rebuild fixes, the group refuses the member
// (*GroupRefusedError) or the slot topic changes under it
// (*SlotTopicError): that error is returned after the other slot jobs
// drained. Before it joins, Run creates the slot topic or checks its
// partition count (EnsureSlotTopic). Run may be called once.
func (m *Member) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.ran {
		m.mu.Unlock()
		return errors.New("group: Member.Run called twice")
	}
	m.ran = true
	m.ctx = ctx
	m.mu.Unlock()
	cfg := m.cfg
	if err := m.ensureSlotTopicOrDrain(ctx); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			m.log.Info("group mode: drained before joining the group: nothing was read")
			return nil
		}
		return err
	}
	opts := append(slices.Clone(cfg.ClientOpts),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(m.topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(m.assigned),
		kgo.OnPartitionsRevoked(m.revoked),
		kgo.OnPartitionsLost(m.lost),
	)
	if t := cfg.SessionTimeout; t > 0 {
		opts = append(opts, kgo.SessionTimeout(t))
	}
	if t := cfg.RebalanceTimeout; t > 0 {
		opts = append(opts, kgo.RebalanceTimeout(t))
	}
	opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	opts = append(opts, cfg.MemberOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("group mode: consumer group %s client: %w", cfg.Group, err)
	}
	m.mu.Lock()
	m.cl = cl
	m.mu.Unlock()
	m.log.Info("group mode: joining the job's consumer group", "group", cfg.Group, "slot_topic", m.topic,
		"slots", m.slots, "instance", cfg.InstanceID)
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		m.poll(pollCtx, cl)
	}()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		m.watchSlotTopic(pollCtx, cl)
	}()
	var result error
	select {
	case <-m.drain:
		m.log.Warn("group mode: draining every slot job, then leaving the group")
		result = m.stopAll(false)
	case err := <-m.fatal:
		result = err
		if errors.Is(err, loader.ErrCrashed) {
			m.stopAll(true) // a failpoint crash: the process is gone
			break
		}
		m.log.Error("group mode: the member failed (a slot job, or the group refused it); draining the slot jobs and leaving the group", "err", err)
		m.stopAll(false)
	case <-cfg.Kill:
		m.stopAll(true)
		result = ErrKilled
	case <-ctx.Done():
		m.stopAll(true)
		result = ctx.Err()
	}
	stopPoll()
	<-polled
	<-watched
	cl.Close() // a static member does not leave: its slots stay with its instance id until the session timeout
	m.wg.Wait()
	if !errors.Is(result, ErrKilled) && !errors.Is(result, loader.ErrCrashed) && !errors.Is(result, kerr.FencedInstanceID) &&
		cfg.LeaveOnStop {
		// A member that ends by choice (drained, failed, aborted) hands
		// its slots over at once: a standby takes them without waiting
		// out the session timeout. Only a kill -9 (or a crash) leaves
		// them reserved for the same instance's quick restart; a member
		// fenced out by another process of its instance id leaves that
		// process alone.
		m.leaveGroup()
	}
	if result == nil {
		select {
		case result = <-m.fatal:
		default:
		}
	}
	return result
}

// ensureSlotTopicOrDrain is EnsureSlotTopic cut by Drain too: before the
// member joins, nothing is read.
func (m *Member) ensureSlotTopicOrDrain(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return EnsureSlotTopic(ctx, m.cfg.ClientOpts, m.cfg.Job, m.slots)
}

// leaveGroup removes the member's static instance from the group
// (LeaveGroup by group.instance.id, KIP-345), so its slots move at once;
// a failure is logged: the slots then move after the session timeout.
func (m *Member) leaveGroup() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(m.cfg.ClientOpts...)
	if err == nil {
		defer cl.Close()
		var rs kadm.LeaveGroupResponses
		rs, err = kadm.NewClient(cl).LeaveGroup(ctx, kadm.LeaveGroup(m.cfg.Group).InstanceIDs(m.cfg.InstanceID).
			Reason("doris-sink member stopping"))
		if err == nil {
			err = rs.Error()
		}
	}
	if err != nil && !errors.Is(err, kerr.UnknownMemberID) {
		m.log.Warn("group mode: leaving the group failed; the member's slots move to another member after "+
			"kafka.session_timeout", "group", m.cfg.Group, "instance", m.cfg.InstanceID, "err", err)
		return
	}
	m.log.Info("group mode: left the group; the member's slots move to another member now", "group", m.cfg.Group,
		"instance", m.cfg.InstanceID)
}

// ErrKilled ends a member stopped by Config.Kill.
var ErrKilled = errors.New("group mode: member killed (testing knob)")

// poll keeps the membership client polling (the slot topic holds no
// records). Errors the client retries are logged; one retrying cannot fix
// (refusedByGroup) ends the member: it is sent to m.fatal, since the
// member would otherwise idle outside the group forever.
func (m *Member) poll(ctx context.Context, cl *kgo.Client) {
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return
		}
		var fatal, session error
		fs.EachError(func(t string, p int32, err error) {
			if fatal == nil {
				fatal = m.refusedByGroup(err)
			}
			if _, ok := errors.AsType[*kgo.ErrGroupSession](err); ok && session == nil {
				session = err
			}
			m.log.Warn("group mode: membership client error", "group", m.cfg.Group, "topic", t, "partition", p, "err", err)
		})
		if session != nil && fatal == nil {
			m.sessionFailed(ctx, cl, session)
		}
		if fatal != nil {
			select {
			case m.fatal <- fatal:
			default:
				m.log.Error("group mode: membership refused while the member is already ending with another error", "err", fatal)
			}
			return
		}
	}
}

// watchSlotTopic checks the slot topic every SlotTopicCheck while the
// member runs. A slot topic deleted (or given other partitions) under a
// running group leaves every member owning no slot, or slots that are not
// the job's, and loading nothing while each looks healthy: the member stops
// instead with a *SlotTopicError naming the topic and what to do. A check
// Kafka does not answer is retried at the next tick.
func (m *Member) watchSlotTopic(ctx context.Context, cl *kgo.Client) {
	every := m.cfg.SlotTopicCheck
	if every <= 0 {
		every = DefaultSlotTopicCheck
	}
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		n, err := topicPartitions(ctx, cl, m.topic)
		var bad error
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			bad = &SlotTopicError{Topic: m.topic, Job: m.cfg.Job, Slots: m.slots, Err: errors.New("deleted while the " +
				"job runs: no member owns a slot, nothing loads; stop every member and start them again (the first start " +
				"recreates it with job.slots partitions; the decisions in the state topic are unchanged)")}
		case err == nil && n != m.slots:
			bad = &SlotTopicError{Topic: m.topic, Job: m.cfg.Job, Partitions: n, Slots: m.slots}
		case err != nil:
			if ctx.Err() == nil {
				m.log.Warn("group mode: slot topic check failed; retrying at the next one", "topic", m.topic, "err", err)
			}
			continue
		}
		if bad == nil {
			continue
		}
		select {
		case m.fatal <- bad:
		default:
			m.log.Error("group mode: slot topic changed while the member is already ending with another error", "err", bad)
		}
		return
	}
}

// refusedByGroup returns a *GroupRefusedError when err is a membership
// error retrying cannot fix, naming what to change; nil otherwise.
func (m *Member) refusedByGroup(err error) error {
	g := m.cfg.Group
	var fix string
	switch {
	case errors.Is(err, kerr.InvalidSessionTimeout):
		fix = "set kafka.session_timeout within the broker's group.min.session.timeout.ms and group.max.session.timeout.ms"
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		fix = "grant the job's principal READ on group " + g + " (or change kafka.group)"
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		fix = "grant the job's principal DESCRIBE and READ on the slot topic " + m.topic
	case errors.Is(err, kerr.InconsistentGroupProtocol), errors.Is(err, kerr.UnsupportedAssignor):
		fix = "kafka.group " + g + " is used by other consumers with another protocol or assignor: give the job its own kafka.group"
	case errors.Is(err, kerr.InvalidGroupID):
		fix = "set kafka.group to a valid group id"
	case errors.Is(err, kerr.FencedInstanceID):
		fix = m.cfg.InstanceFix
		if fix == "" {
			fix = "another running process uses instance id " + m.cfg.InstanceID + ": give each process its own"
		}
	default:
		return nil
	}
	return &GroupRefusedError{Job: m.cfg.Job, Group: g, Fix: fix, Err: err}
}

// GroupRefusedError is a member the job's consumer group refuses for a
// reason retrying cannot fix (a session timeout outside the broker's
// bounds, a missing ACL, a group used by other consumers, a duplicate
// static instance id): the member ends with it instead of idling outside
// the group.
type GroupRefusedError struct {
	// Job and Group name the job and its consumer group (kafka.group).
	Job, Group string
	// Fix says which key or ACL to change.
	Fix string
	// Err is the Kafka error.
	Err error
}

// Error names the group, the cause and the fix.
func (e *GroupRefusedError) Error() string {
	return fmt.Sprintf("job %s: consumer group %s (kafka.group) refused this member: %v; nothing is loaded by it: %s",
		e.Job, e.Group, e.Err, e.Fix)
}

// Unwrap returns the Kafka error.
func (e *GroupRefusedError) Unwrap() error { return e.Err }

// slotsOf returns the slot-topic partitions of an assignment callback,
// sorted.
func (m *Member) slotsOf(parts map[string][]int32) []int {
	var out []int
	for _, p := range parts[m.topic] {
		if int(p) < m.slots {
			out = append(out, int(p))
		}
	}
	slices.Sort(out)
	return out
}

// assigned starts a slot job for every slot the group gave this member.
func (m *Member) assigned(_ context.Context, cl *kgo.Client, parts map[string][]int32) {
	slots := m.slotsOf(parts)
	id, gen := cl.GroupMetadata()
	m.log.Info("group mode: slots assigned", "slots", slots, "member", id, "generation", gen)
	m.mu.Lock()
	m.cl = cl
	m.gen = gen
	for _, s := range slots {
		m.owned[s] = true
	}
	// Every owned slot without a job: newly assigned, or suspended after a
	// refused decision and now in the assignment of a newer generation
	// (cooperative: a kept slot is not in parts, but the callback runs on
	// every generation).
	for s, own := range m.owned {
		if !own || m.draining || m.jobs[s] != nil {
			continue
		}
		if refused, ok := m.suspended[s]; ok {
			if gen <= refused {
				continue
			}
			delete(m.suspended, s)
			m.rebuilds[s]++
			m.log.Info("group mode: a suspended slot is in the assignment of a newer generation; rebuilding its job",
				"slot", s, "refused_generation", refused, "generation", gen)
		}
		m.startLocked(s)
	}
	m.mu.Unlock()
	m.inGroup(gen)
	m.setReady(true)
	if m.hooks.Assigned != nil {
		m.hooks.Assigned(slots)
	}
}

// revoked hands slots over (cooperative: only the slots that move): each
// slot job drains (finishes its open checkpoint: precommit, decide,
// commit, or abort) within the rebalance timeout minus a margin, then is
// cancelled; the slot is released only after.
func (m *Member) revoked(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	slots := m.slotsOf(parts)
	if len(slots) == 0 {
		return
	}
	m.log.Info("group mode: slots revoked; draining their jobs", "slots", slots)
	if m.hooks.Revoking != nil {
		m.hooks.Revoking(slots)
	}
	margin := min(revokeMargin, m.rebalanceTimeout()/4)
	m.stop(slots, false, m.rebalanceTimeout()-margin, margin/2)
	if m.hooks.Revoked != nil {
		m.hooks.Revoked(slots)
	}
}

// lost cancels the jobs of slots the member lost (its session expired, it
// was fenced out of the group): they decide nothing more.
func (m *Member) lost(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	slots := m.slotsOf(parts)
	if len(slots) == 0 {
		return
	}
	m.log.Warn("group mode: slots lost (the group moved them without a hand-over); cancelling their jobs", "slots", slots)
	m.setReady(false) // out of the group until the next assignment
	m.outOfGroup(fmt.Sprintf("slots %v lost (session expired or fenced out of the group)", slots))
	m.stop(slots, true, 0, min(revokeMargin, m.rebalanceTimeout()/4)/2)
	if m.hooks.Revoked != nil {
		m.hooks.Revoked(slots)
	}
}

func (m *Member) rebalanceTimeout() time.Duration {
	if t := m.cfg.RebalanceTimeout; t > 0 {
		return t
	}
	return DefaultRebalanceTimeout
}

// stop ends the jobs of slots: cancelled at once (cancel), or drained
// and cancelled past bound; the slots are marked not owned after their
// job ended (a drain's decision still needs the ownership). It returns the
// slots whose drain was cut at the bound (their open checkpoint left
// undecided).
//
// A cancelled job may still run its bounded clean-up (the loader's Close
// aborts or commits under its own close budget, a Kafka abort under its
// own): stop waits for it at most grace (negative: without limit), since
// a rebalance callback that outlasts the rebalance timeout gets the
// member dropped from the round and stalls the group. A job still running
// then is left to end on its own: its slot is marked not owned before stop
// returns, so its stamp refuses any decision it would begin, an in-flight
// one carries the old generation Kafka refuses, and the slot's next owner
// fences its producer epoch and aborts what it left undecided (another
// job of this process opening the slot waits for its ledger lock).
func (m *Member) stop(slots []int, cancel bool, bound, grace time.Duration) (cut []int) {
	m.mu.Lock()
	var jobs []*slotJob
	for _, s := range slots {
		if cancel {
			m.owned[s] = false
		}
		if sj := m.jobs[s]; sj != nil {
			jobs = append(jobs, sj)
		}
	}
	m.mu.Unlock()
	// One deadline for every slot: a slot whose drain outlasts it is
	// cancelled, and so is every slot after it still draining.
	deadline, stopDeadline := context.WithDeadline(context.Background(), time.Now().Add(bound))
	defer stopDeadline()
	var after context.Context
	if !cancel {
		for _, sj := range jobs {
			sj.drain()
		}
	}
	for _, sj := range jobs {
		if !cancel {
			select {
			case <-sj.done:
				continue
			case <-deadline.Done():
				m.log.Warn("group mode: a slot's drain outlasted its bound (kafka.rebalance_timeout); cancelling it (its open "+
					"checkpoint stays undecided: the slot's next owner aborts it)", "slot", sj.slot, "bound", bound)
				cut = append(cut, sj.slot)
			}
		}
		sj.cancel()
		if grace < 0 {
			<-sj.done
			continue
		}
		if after == nil {
			// One grace deadline from the first cancel, for every slot.
			var stopAfter context.CancelFunc
			after, stopAfter = context.WithTimeout(context.Background(), grace)
			defer stopAfter()
		}
		select {
		case <-sj.done:
		case <-after.Done():
			m.log.Warn("group mode: a cancelled slot job did not end within its grace (the rest of the rebalance "+
				"margin); handing the slot over without waiting (the job can decide nothing more: its slot is no "+
				"longer owned, and the next owner fences and aborts its open checkpoint)", "slot", sj.slot, "grace", grace)
		}
	}
	m.mu.Lock()
	for _, s := range slots {
		m.owned[s] = false
		delete(m.suspended, s)
		delete(m.rebuilds, s)
		if sj := m.jobs[s]; sj != nil && slices.Contains(jobs, sj) {
			delete(m.jobs, s)
		}
		if m.hooks.SlotReleased != nil {
			m.hooks.SlotReleased(s) // moved away (tell the metrics: its series go)
		}
	}
	m.mu.Unlock()
	return cut
}

// DrainCutError is a signal's drain of a group member that did not finish
// within its bound (kafka.rebalance_timeout): the open checkpoints of Slots
// were cancelled undecided. Nothing is lost or loaded twice (each slot's
// next owner aborts it and resumes from the slot's last decision), but the
// member did not checkpoint everything it read, so it does not exit 0.
type DrainCutError struct {
	// Slots are the slots whose drain was cut; Bound the bound.
	Slots []int
	Bound time.Duration
}

// Error names the slots, the bound and the key.
func (e *DrainCutError) Error() string {
	return fmt.Sprintf("drain cut after %v (kafka.rebalance_timeout): the open checkpoints of slot(s) %v were cancelled "+
		"undecided; their next owners abort them and re-read those records (nothing lost or loaded twice)", e.Bound, e.Slots)
}

// stopAll drains (or, with cancel, cancels) every slot job and stops
// starting new ones; it returns the first slot job error seen meanwhile.
func (m *Member) stopAll(cancel bool) error {
	m.mu.Lock()
	m.draining = true
	var slots []int
	for s := range m.jobs {
		slots = append(slots, s)
	}
	m.mu.Unlock()
	// No grace bound: the member leaves the group only after, so its
	// slots move only once every job ended.
	cut := m.stop(slots, cancel, m.drainBound(), -1)
	select {
	case err := <-m.fatal:
		return err
	default:
	}
	if len(cut) > 0 {
		slices.Sort(cut)
		return &DrainCutError{Slots: cut, Bound: m.drainBound()}
	}
	return nil
}

// drainBound bounds a member's drain of all its slots on a signal.
func (m *Member) drainBound() time.Duration {
	return m.rebalanceTimeout()
}

// startLocked starts the job of slot s; m.mu is held.
func (m *Member) startLocked(s int) {
	ctx, cancel := context.WithCancel(m.ctx)
	sj := &slotJob{slot: s, rebuilt: m.rebuilds[s], cancel: cancel, done: make(chan struct{}), drainCh: make(chan struct{})}
	m.jobs[s] = sj
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(sj.done)
		defer cancel()
		m.runSlot(ctx, sj)
	}()
}

// owns reports whether the member owns slot s and is not draining.
func (m *Member) owns(s int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owned[s] && !m.draining
}

// runSlot builds and runs slot sj.slot's job. A decision refused for the
// membership (kafka.ErrNotOwner: a stale generation, an unknown member, a
// slot not in the assignment) ends the job; the slot is then either no
// longer owned (dropped) or suspended (see suspend): never rebuilt from
// the local view alone, since a member whose session expired unnoticed
// would open the slot's log and fence its live owner. An error no rebuild
// fixes is fatal to the member.
func (m *Member) runSlot(ctx context.Context, sj *slotJob) {
	s := sj.slot
	log := m.log.With("slot", s)
	if sj.rebuilt > 0 && !m.backoff(ctx, sj, log) {
		return
	}
	wait := time.Second
	for {
		err := m.runSlotOnce(ctx, sj, sj.rebuilt, log)
		var locked *ledger.LockedError
		if errors.As(err, &locked) && ctx.Err() == nil && m.owns(s) {
			// Another process of this job on this machine (same
			// job.data_dir) still holds the slot's ledger: a former owner
			// that is paused or still stopping. Opening the slot's store
			// fenced it; wait for it to let go.
			log.Warn("group mode: the slot's ledger is held by another process of the job on this machine (a former "+
				"owner still stopping, or paused); retrying", "ledger", locked.Path, "retry_in", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
			wait = min(2*wait, 10*time.Second)
			continue
		}
		if m.hooks.SlotStopped != nil {
			m.hooks.SlotStopped(s, sj.built(), err)
		}
		switch {
		case err == nil:
			log.Info("group mode: slot job drained")
			return
		case ctx.Err() != nil:
			log.Info("group mode: slot job cancelled", "err", err)
			return
		case errors.Is(err, kafka.ErrNotOwner):
			m.suspend(sj, m.refusedGeneration(err), err, log)
			return
		case errors.Is(err, coordlog.ErrFenced):
			// The slot's log was opened by a newer incarnation. When the
			// group gave the slot to another member (this one was out:
			// paused past its session timeout, then resumed), that is the
			// new owner fencing this zombie, refused as designed; else
			// it is a second writer of the job (below: fatal).
			if taken, why := m.slotTakenOver(m.ctx, s); taken {
				log.Warn("group mode: the slot's log was fenced by its new owner (this member was out of the group); "+
					"its job stops without deciding anything more", "why", why, "err", err)
				m.suspend(sj, m.refusedGeneration(err), err, log)
				return
			} else if why != "" {
				log.Error("group mode: the slot's log was fenced while Kafka does not show another owner", "why", why)
			}
		}
		err = fmt.Errorf("group mode: job %s writer slot %d (state topic %s, transactional id %s): %w", m.cfg.Job, s,
			coordlog.StateTopic(m.cfg.Job), coordlog.TransactionalID(m.cfg.Job, coordlog.SlotScope(s)), err)
		select {
		case m.fatal <- err:
		default:
			// A second slot's terminal error: the member already ends with
			// the first one; this one is logged, never dropped silently.
			log.Error("group mode: slot job failed while the member is already ending with another slot's error", "err", err)
		}
		return
	}
}

// refusedGeneration is the generation a refused decision was stamped with
// (*coordlog.GenerationError), or the member's generation at the refusal
// (the membership check failed before the transaction began).
func (m *Member) refusedGeneration(err error) int32 {
	if ge, ok := errors.AsType[*coordlog.GenerationError](err); ok {
		return ge.Stamp.Generation
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// suspend ends sj after its decision was refused for the membership
// stamped at generation refused: a slot no longer owned is dropped; an
// owned one is suspended until an assignment of a newer generation
// includes it (assigned rebuilds it then), or rebuilt at once when such an
// assignment already arrived while the refused decision was in flight.
func (m *Member) suspend(sj *slotJob, refused int32, err error, log *slog.Logger) {
	s := sj.slot
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs[s] == sj {
		delete(m.jobs, s)
	}
	if !m.owned[s] || m.draining {
		log.Info("group mode: slot no longer owned; its job stops", "err", err)
		return
	}
	if m.gen > refused {
		m.rebuilds[s]++
		log.Warn("group mode: slot decision refused for an older generation than the member's; rebuilding the slot "+
			"job (its recovery aborts the undecided checkpoint)", "refused_generation", refused, "generation", m.gen, "err", err)
		m.startLocked(s)
		return
	}
	m.suspended[s] = refused
	log.Warn("group mode: slot decision refused for the membership; the slot job is suspended until the member rejoins "+
		"the group and a newer generation's assignment includes the slot (its log is not opened before)",
		"refused_generation", refused, "err", err)
	if len(m.jobs) == 0 {
		m.setReady(false)
	}
}

// Rebuild backoff: the n-th rebuild of a slot since it was assigned waits
// rebuildBackoff·2^(n-1), at most maxRebuildBackoff, so that a rebuild
// loop can never spin.
const (
	rebuildBackoff    = 500 * time.Millisecond
	maxRebuildBackoff = 30 * time.Second
)

// backoff waits before rebuild sj.rebuilt of the slot; false: the slot job
// was cancelled or drained meanwhile (nothing to run).
func (m *Member) backoff(ctx context.Context, sj *slotJob, log *slog.Logger) bool {
	wait := rebuildBackoff << min(sj.rebuilt-1, 10)
	wait = min(wait, maxRebuildBackoff)
	log.Info("group mode: rebuilding the slot job after a backoff", "rebuilt", sj.rebuilt, "backoff", wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-sj.drainCh:
		return false
	}
}

// runSlotOnce builds slot sj.slot's job (Config.NewSlotJob) and runs it
// to its end.
func (m *Member) runSlotOnce(ctx context.Context, sj *slotJob, rebuilt int, log *slog.Logger) error {
	s := sj.slot
	slot := Slot{Index: s, Slots: m.slots, Scope: coordlog.SlotScope(s), Stamp: m.stamp(s), Rebuilt: rebuilt, Logger: log}
	// A drain asked while the job is built (its store opening, the
	// offsets checked: waits on Kafka) cuts the build: nothing was read.
	buildCtx, stopBuild := context.WithCancel(ctx)
	go func() {
		select {
		case <-sj.drainCh:
			stopBuild()
		case <-buildCtx.Done():
		}
	}()
	job, err := m.cfg.NewSlotJob(buildCtx, slot)
	drainCut := buildCtx.Err() != nil && ctx.Err() == nil
	stopBuild()
	if err == nil && job == nil {
		err = fmt.Errorf("group mode: job %s slot %d: NewSlotJob returned neither a job nor an error", m.cfg.Job, s)
	}
	if err != nil {
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		if drainCut {
			log.Info("group mode: slot job drained before it began loading: nothing was read", "cut", err)
			return nil
		}
		return err
	}
	sj.set(job)
	if m.hooks.SlotStarted != nil {
		m.hooks.SlotStarted(slot, job)
	}
	log.Info("group mode: slot job running", "state_topic", coordlog.StateTopic(m.cfg.Job),
		"transactional_id", coordlog.TransactionalID(m.cfg.Job, coordlog.SlotScope(s)), "rebuilt", rebuilt)
	return job.Run(ctx)
}

// Ownership is what a member knows of its slots: the metrics of the slots
// it owns (doris_sink_slot_owned) and a status page read it.
type Ownership struct {
	// Owned are the slots in the member's current assignment.
	Owned map[int]bool
	// MemberID and Generation are the member's in the group ("" and -1
	// out of it, or before it joined).
	MemberID   string
	Generation int32
}

// Ownership returns the member's view of its slots now. Safe to call from
// any goroutine, before, during and after Run.
func (m *Member) Ownership() Ownership {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := Ownership{Owned: map[int]bool{}, Generation: -1}
	for s, own := range m.owned {
		if own {
			o.Owned[s] = true
		}
	}
	if m.cl != nil {
		o.MemberID, o.Generation = m.cl.GroupMetadata()
	}
	return o
}

// SlotDataDir is the local directory of slot's job in a job of slots
// writer slots (its ledger, the evidence of that slot's decisions):
// <data_dir>/slot-<slot> for slots ≥ 2, and data_dir itself for one slot,
// where a standalone job keeps it and every reader finds it. A member's
// NewSlotJob chooses its slot's directory; doris-sink's uses this rule.
func SlotDataDir(dataDir string, slot, slots int) string {
	if slots < 2 {
		return dataDir
	}
	return filepath.Join(dataDir, "slot-"+strconv.Itoa(slot))
}

// stamp returns slot s's decision check (coordlog.Config.Stamp): the slot
// must be in the member's current assignment; the stamp is the member id
// and generation of that moment.
func (m *Member) stamp(s int) func() (coordlog.GroupStamp, error) {
	return func() (coordlog.GroupStamp, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		scope := coordlog.SlotScope(s)
		if !m.owned[s] {
			return coordlog.GroupStamp{}, &coordlog.NotOwnerError{Job: m.cfg.Job, Scope: scope, Group: m.cfg.Group,
				Reason: "slot " + scope + " is not in the member's current assignment"}
		}
		id, gen := m.cl.GroupMetadata()
		if id == "" || gen < 0 {
			return coordlog.GroupStamp{}, &coordlog.NotOwnerError{Job: m.cfg.Job, Scope: scope, Group: m.cfg.Group,
				Reason: "the member is not in the group now"}
		}
		st := coordlog.GroupStamp{MemberID: id, Generation: gen}
		if inst := m.cfg.InstanceID; inst != "" {
			st.InstanceID = &inst
		}
		return st, nil
	}
}
