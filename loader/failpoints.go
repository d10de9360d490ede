package loader

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Failpoint names: the cut points of the exactly-once cycle (docs/design.md §2).
// Each constant says what is durable when it fires, that is, what a crash
// there leaves behind for Recover. "L(N)" is the label of the checkpoint
// being written, "N−1" the one before it. With several tables (WriteTo) the
// per-load cut points (after-announce, mid-stream, after-precommit,
// mid-commit and the after-commit ones) fire once per table's txn, so a
// later hit (Action.Skip) cuts a checkpoint with some tables begun,
// precommitted or committed and others not.
const (
	// FailBeforeAnnounce fires before the store write that announces L(N)
	// when that write is one of its own: the first checkpoint after Recover,
	// or a table first written in checkpoint N that N−1 did not touch (in
	// steady state the announcements ride on the write deciding N−1,
	// covered by FailBeforeDecide). Durable: nothing about L(N) of that
	// table.
	FailBeforeAnnounce = "before-announce"
	// FailAfterAnnounce fires when L(N) is durably announced and its Stream
	// Load has not begun (at the first Write of checkpoint N). Durable: the
	// announcement; Doris knows nothing of L(N).
	FailAfterAnnounce = "after-announce"
	// FailMidStream fires after the first row of checkpoint N was handed to
	// the Stream Load body: the txn of L(N) is begun (PREPARE) or about to be,
	// holding part of the checkpoint. Durable: the announcement.
	FailMidStream = "mid-stream"
	// FailAfterPrecommit fires when Doris has precommitted L(N) (its TxnId is
	// known) and nothing more: no decision. Durable: the announcement; Doris
	// holds a PRECOMMITTED txn that Recover aborts.
	FailAfterPrecommit = "after-precommit"
	// FailBeforeDecide fires after N−1's commit finished (invariant 3) and
	// right before the store write deciding N (and announcing N+1). Durable
	// as FailAfterPrecommit, plus N−1 committed (store and ledger); the
	// ledger has no "decided" entry for N.
	FailBeforeDecide = "before-decide"
	// FailAfterDecide fires when decision N (labels, txn id, start, end) and
	// the announcement of N+1 are durable in the store, the ledger's
	// "decided" entry of N (with Doris's row counters) is appended and
	// fsync'd, and the commit of N has not started. Recover commits N and
	// its ledger "committed" entry carries the decided entry's counters.
	FailAfterDecide = "after-decide"
	// FailMidCommit fires in the background commit of N, before the first
	// commit request is sent; the streaming of N+1 may be under way.
	// Durable: decision N; Doris: N is PRECOMMITTED. An error action makes
	// that commit attempt fail (it is retried with backoff).
	FailMidCommit = "mid-commit"
	// FailAfterCommitBeforeLedger fires when Doris answered the commit of N
	// (N is COMMITTED or VISIBLE) and neither the store nor the ledger says
	// so (the ledger has N's "decided" entry only). Recover finds N VISIBLE
	// and marks it committed. An error action fails the bookkeeping: the
	// loader then needs Recover.
	FailAfterCommitBeforeLedger = "after-commit-before-ledger"
	// FailAfterCommitResponseLost fires when the commit of N was applied at
	// Doris; an error action makes the loader treat the answer as lost
	// (ambiguous), so it looks the label up (get_load_state) instead. Crash
	// leaves what FailAfterCommitBeforeLedger leaves.
	FailAfterCommitResponseLost = "after-commit-response-lost"
)

// FailResolveBeforeLedger fires in ResolveAssume (an operator's `checkpoint
// resolve`, or `run` applying an operator record from the Kafka state
// topic) when the resolution is saved in the store (State.Resolved, and the
// txn marked committed for "visible") and its "resolved" ledger entry is
// not appended. Recover appends the missing entry (repairResolved). It is
// armed through ResolveFailpoints, not in a loader's cycle, so it is not
// in AllFailpoints.
const FailResolveBeforeLedger = "resolve-before-ledger"

// OperatorFailpoints is the catalogue of the cut points outside the
// loader's cycle (operator actions); Arm accepts them as well.
var OperatorFailpoints = []string{FailResolveBeforeLedger}

// AllFailpoints is the catalogue of failpoint names, in cycle order. Tests
// iterate over it. With AtLeastOnce there is no commit phase: the load is
// committed when it returns, after-precommit fires after it returned, and
// mid-commit and the after-commit points never fire.
var AllFailpoints = []string{
	FailBeforeAnnounce,
	FailAfterAnnounce,
	FailMidStream,
	FailAfterPrecommit,
	FailBeforeDecide,
	FailAfterDecide,
	FailMidCommit,
	FailAfterCommitBeforeLedger,
	FailAfterCommitResponseLost,
}

// ErrInjected is the error of a failpoint armed with ReturnError(nil).
var ErrInjected = errors.New("loader: injected failpoint error")

// errCrash is what fire returns for a crash action; the loader turns it
// into a crash and its callers see ErrCrashed.
var errCrash = errors.New("loader: failpoint crash")

type actionKind int

const (
	actError actionKind = iota + 1
	actCrash
	actBlock
)

// Action is what an armed failpoint does when hit. The zero value is not
// valid; use ReturnError, Crash or Block.
type Action struct {
	kind  actionKind
	err   error
	times int // 0 = every hit while armed
	skip  int // hits to pass before acting
}

// ReturnError makes the cut point fail with err (ErrInjected when nil), as
// if the operation at that point had failed.
func ReturnError(err error) Action {
	if err == nil {
		err = ErrInjected
	}
	return Action{kind: actError, err: err}
}

// Crash abandons the loader at the cut point, like a killed process: every
// in-flight Doris request is cancelled, nothing is cleaned up, nothing more
// is written to the store (which is released, as a dying process releases
// its lock), and every later call returns ErrCrashed. The hook set with
// Failpoints.OnCrash runs first.
func Crash() Action { return Action{kind: actCrash} }

// Block holds the cut point until Handle.Release, the loader crashing or
// closing, or the operation's context ending.
func Block() Action { return Action{kind: actBlock} }

// Times limits a to the next n hits; later hits pass. n ≤ 0 means every
// hit while armed (the default).
func (a Action) Times(n int) Action {
	a.times = max(n, 0)
	return a
}

// Skip makes a pass the first n hits and act from hit n+1 on ("3+crash" in
// the ParseFailpoints syntax).
func (a Action) Skip(n int) Action {
	a.skip = max(n, 0)
	return a
}

// String renders a in the ParseFailpoints syntax.
func (a Action) String() string {
	var s string
	switch a.kind {
	case actError:
		s = "error"
		if a.err != ErrInjected {
			s = "error(" + a.err.Error() + ")"
		}
	case actCrash:
		s = "crash"
	case actBlock:
		s = "block"
	default:
		s = "invalid"
	}
	if a.times > 0 {
		s = strconv.Itoa(a.times) + "*" + s
	}
	if a.skip > 0 {
		s = strconv.Itoa(a.skip) + "+" + s
	}
	return s
}

// Failpoints holds the armed failpoints of one loader (there is no global
// registry). The zero value is not usable; create it with NewFailpoints or
// ParseFailpoints and pass it in Config.Failpoints. A nil *Failpoints is
// valid and disarmed. It is safe for concurrent use. Hits are counted for
// every cut point passed, armed or not.
type Failpoints struct {
	mu    sync.Mutex
	armed map[string]*Handle
	hits  map[string]int
	// changed is closed and replaced on every hit.
	changed chan struct{}
	onCrash func(name string)
	// hookRunning is closed when the OnCrash hook of the crash acting now
	// returned (nil: none runs): another goroutine of the dying loader
	// that reaches a cut point meanwhile waits for it, so the loader is
	// not abandoned (its store released) before the hook saw the cut
	// point's state.
	hookRunning chan struct{}
}

// OnCrash sets fn (nil: none) to run when a Crash action acts: it is called
// synchronously at the cut point, on the goroutine that hit it, with the
// failpoint's name, before the loader abandons itself, so nothing more has
// happened since the state that failpoint documents. A process emulating
// kill -9 exits in fn (doris-sink run exits 137); if fn returns, the loader
// crashes as usual. It is not called for a loader already crashed or
// closed, so a loader calls it at most once unless two goroutines hit
// crash points at the same instant. fn must not call back into the
// Failpoints or the Loader.
func (f *Failpoints) OnCrash(fn func(name string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onCrash = fn
}

// NewFailpoints returns an empty set: nothing armed.
func NewFailpoints() *Failpoints {
	return &Failpoints{armed: map[string]*Handle{}, hits: map[string]int{}, changed: make(chan struct{})}
}

// Handle is one armed failpoint. It is safe for concurrent use.
type Handle struct {
	fp       *Failpoints
	name     string
	action   Action
	hits     int // hits while armed that acted
	seen     int // hits while armed
	released chan struct{}
	relOnce  sync.Once
}

// Arm arms the failpoint name with action, replacing an earlier arming of
// it. An unknown name or invalid action is an error listing the known
// names.
func (f *Failpoints) Arm(name string, action Action) (*Handle, error) {
	if !slices.Contains(AllFailpoints, name) && !slices.Contains(OperatorFailpoints, name) {
		return nil, fmt.Errorf("arm failpoint %q: unknown name (known: %s)", name,
			strings.Join(slices.Concat(AllFailpoints, OperatorFailpoints), ", "))
	}
	if action.kind == 0 {
		return nil, fmt.Errorf("arm failpoint %q: invalid action (use ReturnError, Crash or Block)", name)
	}
	h := &Handle{fp: f, name: name, action: action, released: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.armed[name]; old != nil {
		old.Release()
	}
	f.armed[name] = h
	return h, nil
}

// Hits returns how many times the cut point name was passed, armed or not.
func (f *Failpoints) Hits(name string) int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[name]
}

// Armed returns the armed failpoint names with their actions, sorted, in
// the ParseFailpoints syntax.
func (f *Failpoints) Armed() []string {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n, h := range f.armed {
		out = append(out, n+"="+h.action.String())
	}
	slices.Sort(out)
	return out
}

// Name returns the failpoint name.
func (h *Handle) Name() string { return h.name }

// Hits returns how many times this arming acted.
func (h *Handle) Hits() int {
	h.fp.mu.Lock()
	defer h.fp.mu.Unlock()
	return h.hits
}

// Wait blocks until this arming acted at least n times or ctx ends.
func (h *Handle) Wait(ctx context.Context, n int) error {
	for {
		h.fp.mu.Lock()
		hits, ch := h.hits, h.fp.changed
		h.fp.mu.Unlock()
		if hits >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for failpoint %s hit %d (have %d): %w", h.name, n, hits, ctx.Err())
		}
	}
}

// Release lets every blocked and future hit of a Block action pass. It is
// idempotent.
func (h *Handle) Release() { h.relOnce.Do(func() { close(h.released) }) }

// Disarm removes this arming (releasing blocked hits). Hits stay readable.
func (h *Handle) Disarm() {
	h.Release()
	h.fp.mu.Lock()
	defer h.fp.mu.Unlock()
	if h.fp.armed[h.name] == h {
		delete(h.fp.armed, h.name)
	}
}

// fire passes the cut point name: it counts the hit and performs the armed
// action. It returns nil to go on, the action's error, or errCrash. abandon
// is closed when the loader crashes or closes (ends a Block). dying is the
// loader's: set (under the lock) when a crash action acts, after which
// every hit, from any goroutine, returns errCrash uncounted: a killed
// process passes no more cut points, so with several goroutines at cut
// points at once (one checkpoint's tables) exactly one crash acts.
func (f *Failpoints) fire(ctx context.Context, name string, abandon <-chan struct{}, dying *atomic.Bool) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if dying.Load() {
		running := f.hookRunning
		f.mu.Unlock()
		if running != nil {
			<-running
		}
		return errCrash
	}
	f.hits[name]++
	h := f.armed[name]
	act := false
	if h != nil {
		h.seen++
		act = h.seen > h.action.skip && (h.action.times == 0 || h.hits < h.action.times)
	}
	onCrash := f.onCrash
	var hookDone chan struct{}
	if act {
		h.hits++
		if h.action.kind == actCrash {
			dying.Store(true)
			if onCrash != nil {
				hookDone = make(chan struct{})
				f.hookRunning = hookDone
			}
		}
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	if !act {
		return nil
	}
	switch h.action.kind {
	case actError:
		return fmt.Errorf("failpoint %s: %w", name, h.action.err)
	case actCrash:
		if hookDone != nil {
			defer func() {
				f.mu.Lock()
				if f.hookRunning == hookDone {
					f.hookRunning = nil
				}
				f.mu.Unlock()
				close(hookDone)
			}()
		}
		select {
		case <-abandon: // crashed or closed already
		default:
			if onCrash != nil {
				onCrash(name)
			}
		}
		return errCrash
	case actBlock:
		select {
		case <-h.released:
			return nil
		case <-abandon:
			return errCrash
		case <-ctx.Done():
			return fmt.Errorf("failpoint %s blocked: %w", name, ctx.Err())
		}
	}
	return nil
}

// ParseFailpoints arms a new Failpoints from spec, the syntax of the
// DORIS_SINK_FAILPOINTS variable (read by cmd/doris-sink only):
// "name=action;name=action", where action is "crash", "block", "error" or
// "error(message)", optionally prefixed by "N*" to act on the next N hits
// only ("mid-commit=2*error") and before that by "K+" to pass the first K
// hits ("after-decide=2+crash": crash at the third). Blanks around items
// are ignored; an empty spec arms nothing.
func ParseFailpoints(spec string) (*Failpoints, error) {
	f := NewFailpoints()
	for item := range strings.SplitSeq(spec, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, act, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("failpoints %q: item %q: want name=action", spec, item)
		}
		a, err := parseAction(strings.TrimSpace(act))
		if err != nil {
			return nil, fmt.Errorf("failpoints %q: item %q: %w", spec, item, err)
		}
		if _, err := f.Arm(strings.TrimSpace(name), a); err != nil {
			return nil, fmt.Errorf("failpoints %q: %w", spec, err)
		}
	}
	return f, nil
}

var reActionPrefix = regexp.MustCompile(`^(?:(\d+)\+)?(?:(\d+)\*)?(.*)$`)

func parseAction(s string) (Action, error) {
	m := reActionPrefix.FindStringSubmatch(s)
	skip, _ := strconv.Atoi(m[1])
	times, _ := strconv.Atoi(m[2])
	if m[2] != "" && times < 1 {
		return Action{}, fmt.Errorf("count %q: want a positive integer before '*'", m[2])
	}
	s = strings.TrimSpace(m[3])
	var a Action
	switch {
	case s == "crash":
		a = Crash()
	case s == "block":
		a = Block()
	case s == "error":
		a = ReturnError(nil)
	case strings.HasPrefix(s, "error(") && strings.HasSuffix(s, ")"):
		a = ReturnError(errors.New(s[len("error(") : len(s)-1]))
	default:
		return Action{}, fmt.Errorf("action %q: want crash, block, error or error(message)", s)
	}
	return a.Times(times).Skip(skip), nil
}
