package doristest

// Behavior (STYLE.md "Fakes and test servers", after franz-go kfake Fault):
//   - A Fault matches calls of one FaultOp whose DB, Table and Label equal the
//     fault's (empty = any). Faults are checked in the order added; Observe
//     faults count every match and let it through; the first other match acts.
//   - Count: 0 = the next matching call only, n > 0 = the next n, -1 = until
//     Remove. A used-up fault stays readable through its handle.
//   - Actions, in order: Block (wait until FaultHandle.Release, the caller
//     disconnecting, or Server.Close), then one of Err (answer with this
//     status/message instead of acting), ApplyThenDrop (act, then close the
//     connection without a reply), Refuse (close the connection without
//     acting or replying). A fault with none of these and not Observe acts
//     as Err{Message: "injected fault"}. Block alone only delays.
//   - Where each op fires and what "act" means is documented on FaultOp.

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// FaultOp names the call a Fault intercepts.
type FaultOp string

// Fault ops.
const (
	// FaultBegin fires on a BE stream load after the header checks, before
	// begin_txn. Err answers Status "Fail" (TxnId -1) without reading the body;
	// ApplyThenDrop begins the txn (left PREPARE until it times out) and drops
	// the connection; Refuse drops it without a txn.
	FaultBegin FaultOp = "begin"
	// FaultStream fires mid-body: after the BE read the first bytes of the
	// body (or at its end when it is empty). Err fails the load with the
	// message (txn ABORTED); ApplyThenDrop and Refuse drop the connection
	// (the BE rolls the txn back: ABORTED). Block stalls the body read.
	FaultStream FaultOp = "stream"
	// FaultPrecommit fires at the end of a 2PC load, before precommit. Err
	// fails the load (txn ABORTED); ApplyThenDrop precommits then drops the
	// connection (txn PRECOMMITTED, client sees a transport error); Refuse
	// drops without precommitting (txn left PREPARE, as if the BE died).
	FaultPrecommit FaultOp = "precommit"
	// FaultCommit fires on a BE _stream_load_2pc commit and at the end of a
	// non-2PC load before its commit. Err answers {"status":..,"msg":..}
	// (2PC) or a Fail load (txn ABORTED); ApplyThenDrop commits then drops;
	// Refuse drops without committing (2PC txn stays PRECOMMITTED; a non-2PC
	// txn stays PREPARE).
	FaultCommit FaultOp = "commit"
	// FaultAbort fires on a BE _stream_load_2pc abort; like FaultCommit.
	FaultAbort FaultOp = "abort"
	// FaultLoadState fires on FE get_load_state. Err answers
	// {"msg":"Error","code":1,"data":<message>,"count":0}.
	FaultLoadState FaultOp = "load_state"
	// FaultShowTxn fires on SHOW TRANSACTION over MySQL. Err, Refuse and
	// ApplyThenDrop all return an error to the MySQL front (it cannot drop
	// the connection from here).
	FaultShowTxn FaultOp = "show_txn"
)

var faultOps = []FaultOp{FaultBegin, FaultStream, FaultPrecommit, FaultCommit, FaultAbort, FaultLoadState, FaultShowTxn}

// FaultErr is the answer a faulted call gives instead of acting.
type FaultErr struct {
	// Status is the Stream Load "Status" (default "Fail"), the 2PC "status"
	// (default "INTERNAL_ERROR"); unused elsewhere.
	Status string `json:"status,omitempty"`
	// Message is the Stream Load "Message", the 2PC "msg", the
	// get_load_state "data" or the MySQL error text.
	Message string `json:"message"`
}

// Fault describes calls to intercept and what to do with them. See the
// package docs above (faults.go) for the rules.
type Fault struct {
	Op    FaultOp `json:"op"`
	DB    string  `json:"db,omitempty"`    // "" = any
	Table string  `json:"table,omitempty"` // "" = any
	Label string  `json:"label,omitempty"` // "" = any
	Count int     `json:"count,omitempty"` // 0 = one call, n = n calls, -1 = until Remove

	Err           *FaultErr `json:"err,omitempty"`
	Block         bool      `json:"block,omitempty"`
	ApplyThenDrop bool      `json:"apply_then_drop,omitempty"`
	Refuse        bool      `json:"refuse,omitempty"`
	Observe       bool      `json:"observe,omitempty"`
}

func (f Fault) validate() error {
	known := false
	for _, op := range faultOps {
		known = known || op == f.Op
	}
	if !known {
		return fmt.Errorf("unknown fault op %q (known: %v)", f.Op, faultOps)
	}
	n := 0
	for _, b := range []bool{f.Err != nil, f.ApplyThenDrop, f.Refuse} {
		if b {
			n++
		}
	}
	if n > 1 {
		return errors.New("fault: at most one of err, apply_then_drop and refuse")
	}
	if f.Observe && (n > 0 || f.Block) {
		return errors.New("fault: observe cannot be combined with an action")
	}
	if f.Count < -1 {
		return fmt.Errorf("fault: count %d (want -1, 0 or more)", f.Count)
	}
	return nil
}

type fault struct {
	id        int64
	spec      Fault
	remaining int // -1 = unlimited
	hits      int
	changed   chan struct{} // closed and replaced on every hit
	released  chan struct{}
	relOnce   sync.Once
	removed   bool
}

// faultSet holds the installed faults. It has its own mutex so that blocked
// calls never hold Server.mu.
type faultSet struct {
	mu     sync.Mutex
	nextID int64
	active []*fault
	all    map[int64]*fault
}

// faultAction is what a faulted call must do after any Block.
type faultAction struct {
	err           *FaultErr
	applyThenDrop bool
	refuse        bool
	block         <-chan struct{}
}

// FaultHandle refers to one installed fault. It is safe for concurrent use.
type FaultHandle struct {
	fs *faultSet
	f  *fault
}

// Fault installs f and returns its handle. It fails on an unknown op or
// conflicting actions.
func (s *Server) Fault(f Fault) (*FaultHandle, error) {
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("install fault: %w", err)
	}
	fs := &s.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.nextID++
	ft := &fault{id: fs.nextID, spec: f, remaining: f.Count, changed: make(chan struct{}), released: make(chan struct{})}
	if f.Count == 0 {
		ft.remaining = 1
	}
	fs.active = append(fs.active, ft)
	fs.all[ft.id] = ft
	return &FaultHandle{fs: fs, f: ft}, nil
}

// FaultByID returns the handle of an installed (or used-up) fault.
func (s *Server) FaultByID(id int64) (*FaultHandle, bool) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	f, ok := s.faults.all[id]
	if !ok {
		return nil, false
	}
	return &FaultHandle{fs: &s.faults, f: f}, true
}

// FaultInfo describes an installed fault (admin GET /faults).
type FaultInfo struct {
	ID     int64 `json:"id"`
	Fault  Fault `json:"fault"`
	Hits   int   `json:"hits"`
	Active bool  `json:"active"`
}

// Faults lists every fault ever installed and not removed, by id.
func (s *Server) Faults() []FaultInfo {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	var out []FaultInfo
	for id := int64(1); id <= s.faults.nextID; id++ {
		if f, ok := s.faults.all[id]; ok {
			out = append(out, f.infoLocked())
		}
	}
	return out
}

// infoLocked describes f; the faultSet mutex must be held.
func (f *fault) infoLocked() FaultInfo {
	return FaultInfo{ID: f.id, Fault: f.spec, Hits: f.hits, Active: !f.removed && f.remaining != 0}
}

// info describes the fault now (admin GET /faults/{id}).
func (h *FaultHandle) info() FaultInfo {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	return h.f.infoLocked()
}

// ID identifies the fault (admin DELETE /faults/{id}).
func (h *FaultHandle) ID() int64 { return h.f.id }

// Hits returns how many calls the fault has matched.
func (h *FaultHandle) Hits() int {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	return h.f.hits
}

// Wait blocks until the fault has matched at least n calls or ctx is done.
func (h *FaultHandle) Wait(ctx context.Context, n int) error {
	for {
		h.fs.mu.Lock()
		hits, ch := h.f.hits, h.f.changed
		h.fs.mu.Unlock()
		if hits >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for fault %d (%d of %d hits): %w", h.f.id, hits, n, ctx.Err())
		}
	}
}

// Release unblocks every call the fault's Block holds, now and later.
func (h *FaultHandle) Release() {
	h.f.relOnce.Do(func() { close(h.f.released) })
}

// Remove uninstalls the fault and releases its blocked calls.
func (h *FaultHandle) Remove() {
	h.fs.mu.Lock()
	h.f.removed = true
	h.fs.active = removeFault(h.fs.active, h.f)
	delete(h.fs.all, h.f.id)
	h.fs.mu.Unlock()
	h.Release()
}

func removeFault(fs []*fault, f *fault) []*fault {
	out := fs[:0]
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// check matches a call and returns the action to take, or nil.
func (fs *faultSet) check(op FaultOp, db, tbl, label string) *faultAction {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var act *faultAction
	for _, f := range fs.active {
		sp := f.spec
		if sp.Op != op || f.remaining == 0 ||
			(sp.DB != "" && sp.DB != db) || (sp.Table != "" && sp.Table != tbl) || (sp.Label != "" && sp.Label != label) {
			continue
		}
		f.hits++
		close(f.changed)
		f.changed = make(chan struct{})
		if f.remaining > 0 {
			f.remaining--
		}
		if sp.Observe {
			continue
		}
		act = &faultAction{err: sp.Err, applyThenDrop: sp.ApplyThenDrop, refuse: sp.Refuse}
		if sp.Block {
			act.block = f.released
		}
		if act.err == nil && !act.applyThenDrop && !act.refuse && !sp.Block {
			act.err = &FaultErr{Message: "injected fault"}
		}
		break
	}
	fs.active = removeUsedUp(fs.active)
	return act
}

func removeUsedUp(fs []*fault) []*fault {
	out := fs[:0]
	for _, f := range fs {
		if f.remaining != 0 {
			out = append(out, f)
		}
	}
	return out
}

// fault checks for a fault on a call and waits out its Block. A nil result
// means "act normally". If ctx ends or the server closes while blocked, the
// result is Refuse (the caller is gone or the server is going away).
func (s *Server) fault(ctx context.Context, op FaultOp, db, tbl, label string) *faultAction {
	act := s.faults.check(op, db, tbl, label)
	if act == nil || act.block == nil {
		return act
	}
	select {
	case <-act.block:
	case <-ctx.Done():
		return &faultAction{refuse: true}
	case <-s.done:
		return &faultAction{refuse: true}
	}
	if act.err == nil && !act.applyThenDrop && !act.refuse {
		return nil
	}
	return act
}
