package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ResolveOpt configures ResolveAssume and PlanResolve.
type ResolveOpt interface{ apply(*resolveCfg) }

type resolveCfg struct {
	table     string
	sub       int
	subSet    bool
	by        string
	ledgerDir string
	now       func() time.Time
	doris     ResolveDoris
	db        string
	fps       *Failpoints
}

type resolveOpt func(*resolveCfg)

func (f resolveOpt) apply(c *resolveCfg) { f(c) }

// ResolveTable names the table ("db.table", or a table of the store
// owner's database) whose txn of the decided checkpoint is resolved. It is
// needed only when the checkpoint has uncommitted txns in several tables
// (each resolved on its own: Doris may know some labels and not others);
// by default the one uncommitted txn is resolved.
func ResolveTable(table string) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.table = table })
}

// ResolveSub names the sub-load of the ResolveTable table whose txn is
// resolved. It is needed only when that table has uncommitted txns of
// several sub-loads (Config.SubLoads); by default the table's one
// uncommitted txn is resolved.
func ResolveSub(sub int) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.sub, c.subSet = sub, true })
}

// ResolveBy names who resolves (default "user@host" of this process).
func ResolveBy(who string) ResolveOpt { return resolveOpt(func(c *resolveCfg) { c.by = who }) }

// ResolveLedger appends a "resolved" entry to the ledger in dir.
func ResolveLedger(dir string) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.ledgerDir = dir })
}

// ResolveFailpoints arms ResolveAssume's cut point
// (FailResolveBeforeLedger) from fps (nil: none). A crash action there
// returns an error wrapping ErrCrashed with the resolution saved and its
// ledger entry not appended, as a killed process leaves it.
func ResolveFailpoints(fps *Failpoints) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.fps = fps })
}

// ResolveClock sets the clock of the resolution time (default time.Now).
func ResolveClock(now func() time.Time) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.now = now })
}

// ResolveDoris is what the resolution guard asks Doris; *doris.Client
// satisfies it.
type ResolveDoris interface {
	// LoadState returns the state of the latest txn of label (docs/doris-facts.md
	// §6.1).
	LoadState(ctx context.Context, db, label string) (doris.TxnStatus, error)
	// TransactionByLabel returns the latest txn of label (SHOW TRANSACTION,
	// §6.2). Its failure only leaves the txn id out of the report.
	TransactionByLabel(ctx context.Context, db, label string) (*doris.Transaction, error)
}

// ResolveCheck makes the resolution ask Doris about the label of db first
// and refuse an assumption that contradicts what Doris still knows
// (*ResolveConflictError): an operator's --assume is only needed, and only
// accepted, when Doris answers UNKNOWN. Without this option nothing checks
// the assumption against Doris; `doris-sink checkpoint resolve` always
// passes it.
func ResolveCheck(client ResolveDoris, db string) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.doris, c.db = client, db })
}

// Actions of a ResolvePlan.
const (
	// ResolveRecord: the assumption is recorded.
	ResolveRecord = "record"
	// ResolveNothing: nothing needs recording (ResolvePlan.Reason says why);
	// ResolveAssume returns an error wrapping ErrNothingToResolve.
	ResolveNothing = "nothing"
)

// ErrNothingToResolve is wrapped by ResolveAssume's error when the
// checkpoint needs no operator decision: it is already marked committed or
// empty, the same assumption is recorded already, or Doris still holds the
// label in the state assumed (Recover settles it on its own).
var ErrNothingToResolve = errors.New("nothing to resolve")

// ResolvePlan is what ResolveAssume would do, computed without changing
// anything (`checkpoint resolve --dry-run` prints it).
type ResolvePlan struct {
	// CheckpointID, Label and TxnID name the decided checkpoint and its
	// decided txn; Table is that txn's table ("db.table").
	CheckpointID uint64 `json:"checkpoint"`
	Table        string `json:"table,omitempty"`
	// Sub is that txn's sub-load within its table.
	Sub   int    `json:"sub,omitempty"`
	Label string `json:"label"`
	TxnID int64  `json:"txn_id,omitempty"`
	// Assumed is the operator's assumption.
	Assumed string `json:"assumed"`
	// Action is ResolveRecord or ResolveNothing.
	Action string `json:"action"`
	// Reason explains Action.
	Reason string `json:"reason"`
	// Doris is what Doris holds for the label; nil without ResolveCheck or
	// when the store alone decides (committed, empty).
	Doris *LabelHeld `json:"doris,omitempty"`
}

// LabelHeld is what Doris holds for a label.
type LabelHeld struct {
	// State is get_load_state's answer for the label.
	State doris.TxnStatus `json:"state"`
	// TxnID and Reason describe the label's latest txn (SHOW TRANSACTION);
	// zero/empty when that lookup failed or Doris knows no txn.
	TxnID  int64  `json:"txn_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// String is "ABORTED (txn 12, timeout by txn manager)".
func (h *LabelHeld) String() string {
	s := string(h.State)
	switch {
	case h.TxnID != 0 && h.Reason != "":
		s += fmt.Sprintf(" (txn %d, %s)", h.TxnID, h.Reason)
	case h.TxnID != 0:
		s += fmt.Sprintf(" (txn %d)", h.TxnID)
	}
	return s
}

// ResolveConflictError is an assumption that contradicts what Doris still
// knows about the label: recording it would lose the checkpoint's rows
// (visible while Doris holds ABORTED, PREPARE or PRECOMMITTED) or load them
// twice (aborted while Doris holds VISIBLE or COMMITTED). Nothing is
// written.
type ResolveConflictError struct {
	CheckpointID uint64
	Label        string
	// TxnID is the decided txn id.
	TxnID   int64
	Assumed string
	// Held is what Doris holds for the label.
	Held LabelHeld
	// Next says what happens instead (what Recover does on restart).
	Next string
}

// Error names the checkpoint, the assumption, what Doris holds and what to
// do instead.
func (e *ResolveConflictError) Error() string {
	return fmt.Sprintf("resolve checkpoint %d: refusing --assume %s: Doris still holds label %s as %s (decided txn %d): %s",
		e.CheckpointID, e.Assumed, e.Label, e.Held.String(), e.TxnID, e.Next)
}

// PlanResolve computes what ResolveAssume would do with the same arguments
// and changes nothing: the plan (ResolveRecord or ResolveNothing with the
// reason), or the refusal ResolveAssume would return (a
// *ResolveConflictError when Doris contradicts the assumption, or an error
// naming why the checkpoint cannot be resolved).
func PlanResolve(ctx context.Context, store checkpoint.Store, checkpointID uint64, assume string, opts ...ResolveOpt) (*ResolvePlan, error) {
	c := newResolveCfg(opts)
	st, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", checkpointID, err)
	}
	return c.plan(ctx, st, checkpointID, assume)
}

func newResolveCfg(opts []ResolveOpt) resolveCfg {
	c := resolveCfg{now: time.Now}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.by == "" {
		c.by = whoAmI()
	}
	return c
}

func (c *resolveCfg) plan(ctx context.Context, st *checkpoint.State, id uint64, assume string) (*ResolvePlan, error) {
	if assume != checkpoint.ResolvedVisible && assume != checkpoint.ResolvedAborted {
		return nil, fmt.Errorf("resolve checkpoint %d: --assume %q: want %q or %q", id, assume,
			checkpoint.ResolvedVisible, checkpoint.ResolvedAborted)
	}
	d := st.Decided
	switch {
	case d == nil:
		return nil, fmt.Errorf("resolve checkpoint %d: nothing is decided in this store", id)
	case d.ID != id:
		return nil, fmt.Errorf("resolve checkpoint %d: only the last decided checkpoint (%d) can be resolved", id, d.ID)
	}
	if d.Empty {
		p := &ResolvePlan{CheckpointID: d.ID, Label: d.Label, Assumed: assume, Action: ResolveNothing,
			Reason: "the checkpoint is empty (no transaction): the job marks it committed on restart"}
		switch {
		case d.Committed && assume == checkpoint.ResolvedAborted:
			return nil, fmt.Errorf("resolve checkpoint %d: refusing --assume aborted: the store marks it committed "+
				"(empty checkpoint, at %s); there is nothing to replay", id, d.CommittedAt.Format(time.RFC3339))
		case d.Committed:
			p.Reason = "the checkpoint is already marked committed"
		}
		return p, nil
	}
	tx, err := c.txnOf(st, d)
	if err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", id, err)
	}
	p := &ResolvePlan{CheckpointID: d.ID, Table: tx.Table, Sub: tx.Sub, Label: tx.Label, TxnID: tx.TxnID, Assumed: assume, Action: ResolveNothing}
	switch {
	case tx.Committed && assume == checkpoint.ResolvedAborted:
		return nil, fmt.Errorf("resolve checkpoint %d: refusing --assume aborted: the store marks its txn of table %s committed "+
			"(Doris reported label %s VISIBLE at %s); replaying it would load its rows twice",
			id, tx.Table, tx.Label, tx.CommittedAt.Format(time.RFC3339))
	case tx.Committed:
		p.Reason = "the checkpoint is already marked committed"
		return p, nil
	}
	if r := lastResolution(st, d, tx.Label); r != nil && r.Assumed == assume {
		p.Reason = fmt.Sprintf("--assume %s is already recorded (by %s at %s)", assume, r.By, r.At.Format(time.RFC3339))
		return p, nil
	}
	if c.doris != nil {
		db, _, _ := checkpoint.SplitTable(tx.Table)
		held, err := c.held(ctx, db, tx.Label)
		if err != nil {
			return nil, fmt.Errorf("resolve checkpoint %d: cannot check the assumption against Doris: %w", id, err)
		}
		p.Doris = held
		if reason, conflict := judge(held, tx.TxnID, assume); conflict {
			return nil, &ResolveConflictError{CheckpointID: d.ID, Label: tx.Label, TxnID: tx.TxnID, Assumed: assume,
				Held: *held, Next: reason}
		} else if reason != "" {
			p.Reason = reason
			return p, nil
		}
	}
	p.Action = ResolveRecord
	if assume == checkpoint.ResolvedVisible {
		p.Reason = "the checkpoint is marked committed; the job resumes after its end (wrong if its rows are not in the table: they are lost)"
	} else {
		p.Reason = "the job replays [start, end) of the checkpoint into the same label on restart (wrong if its rows are in the table: they load twice)"
	}
	return p, nil
}

// txnOf returns the txn of d to resolve: the one of the ResolveTable
// table, else d's one uncommitted txn (or its only txn).
func (c *resolveCfg) txnOf(st *checkpoint.State, d *checkpoint.Decision) (*checkpoint.Txn, error) {
	dd := d.Clone()
	dd.Sync(st.Owner) // a version-1 form decision becomes its one txn
	names := txnTables(&dd)
	if c.table != "" {
		name := c.table
		if !strings.Contains(name, ".") {
			name = st.Owner.DB + "." + name
		}
		if c.subSet {
			if t := dd.SubTxn(name, c.sub); t != nil {
				return t, nil
			}
			return nil, fmt.Errorf("it has no txn of table %s sub-load %d (its txns: %s)", name, c.sub, names)
		}
		var of, open []*checkpoint.Txn
		for i := range dd.Txns {
			if t := &dd.Txns[i]; t.Table == name {
				of = append(of, t)
				if !t.Committed {
					open = append(open, t)
				}
			}
		}
		switch {
		case len(of) == 0:
			return nil, fmt.Errorf("it has no txn of table %s (its txns: %s)", name, names)
		case len(of) == 1:
			return of[0], nil
		case len(open) == 1:
			return open[0], nil
		case len(open) == 0:
			return of[0], nil
		}
		return nil, fmt.Errorf("it has uncommitted txns of %d sub-loads of table %s: name the sub-load to resolve "+
			"(--sub); each is resolved on its own", len(open), name)
	}
	if len(dd.Txns) == 1 {
		return &dd.Txns[0], nil
	}
	var open []*checkpoint.Txn
	for i := range dd.Txns {
		if !dd.Txns[i].Committed {
			open = append(open, &dd.Txns[i])
		}
	}
	switch len(open) {
	case 0:
		return &dd.Txns[0], nil
	case 1:
		return open[0], nil
	}
	var tables []string
	for _, t := range open {
		tables = append(tables, t.Table)
	}
	return nil, fmt.Errorf("it has uncommitted txns of %d tables (%s): name the table to resolve (--table); "+
		"each is resolved on its own", len(open), strings.Join(tables, ", "))
}

// held asks Doris what it holds for lbl in db (the store's database when
// db is empty).
func (c *resolveCfg) held(ctx context.Context, db, lbl string) (*LabelHeld, error) {
	if db == "" {
		db = c.db
	}
	s, err := c.doris.LoadState(ctx, db, lbl)
	if err != nil {
		return nil, fmt.Errorf("look up label %s in db %s: %w", lbl, db, err)
	}
	h := &LabelHeld{State: s}
	if s != doris.TxnUnknown {
		if t, err := c.doris.TransactionByLabel(ctx, db, lbl); err == nil {
			h.TxnID, h.Reason = t.ID, t.Reason
		}
	}
	return h, nil
}

// judge compares the assumption with what Doris holds (the docs/design.md §2
// recovery table): "" and false when only the operator can tell (UNKNOWN);
// otherwise what Recover does on restart, and whether the assumption
// contradicts Doris.
func judge(h *LabelHeld, txnID int64, assume string) (string, bool) {
	visible := assume == checkpoint.ResolvedVisible
	switch h.State {
	case doris.TxnUnknown:
		return "", false
	case doris.TxnVisible, doris.TxnCommitted:
		return "its rows are in the table; restart the job: it marks the checkpoint committed", !visible
	case doris.TxnAborted:
		return "its rows are not in the table; restart the job: it replays [start, end) into the same label (heal)", visible
	case doris.TxnPrecommitted:
		if h.TxnID != 0 && h.TxnID != txnID {
			return fmt.Sprintf("txn %d is an undecided heal attempt; restart the job: it aborts it and heals the checkpoint", h.TxnID), true
		}
		return "the decided txn still waits for its commit; restart the job: it commits it", true
	default: // PREPARE: only a heal attempt reuses a decided label
		return "a heal attempt is still loading; restart the job: it aborts the attempt and heals the checkpoint", true
	}
}

// lastResolution returns the newest resolution of d's txn labelled lbl
// made after d was decided, nil if none.
func lastResolution(st *checkpoint.State, d *checkpoint.Decision, lbl string) *checkpoint.Resolution {
	for i := len(st.Resolved) - 1; i >= 0; i-- {
		r := &st.Resolved[i]
		if r.CheckpointID == d.ID && r.Label == lbl && !r.At.Before(d.DecidedAt) {
			return r
		}
	}
	return nil
}

// ResolveAssume records an operator's decision about the decided checkpoint
// checkpointID whose label Doris no longer knows (*UnresolvedError), for
// `doris-sink checkpoint resolve --assume visible|aborted`. Run it while no
// Loader uses the store. assume is checkpoint.ResolvedVisible (the rows are
// in the table: the checkpoint is marked committed) or
// checkpoint.ResolvedAborted (they are not: the next Recover heals it,
// replaying [start, end) into the same label). The choice is recorded in
// State.Resolved and, with ResolveLedger, in the ledger. A wrong "visible"
// loses the checkpoint's rows; a wrong "aborted" loads them twice.
//
// It does exactly what PlanResolve reports: with ResolveCheck, an
// assumption contradicting what Doris still holds is refused
// (*ResolveConflictError), and a checkpoint that needs no decision returns
// an error wrapping ErrNothingToResolve, with nothing written.
func ResolveAssume(ctx context.Context, store checkpoint.Store, checkpointID uint64, assume string, opts ...ResolveOpt) (*checkpoint.Resolution, error) {
	c := newResolveCfg(opts)
	st, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", checkpointID, err)
	}
	p, err := c.plan(ctx, st, checkpointID, assume)
	if err != nil {
		return nil, err
	}
	if p.Action == ResolveNothing {
		return nil, fmt.Errorf("resolve checkpoint %d: %w: %s", checkpointID, ErrNothingToResolve, p.Reason)
	}
	d := st.Decided
	d.Sync(st.Owner)
	now := c.now()
	r := checkpoint.Resolution{CheckpointID: d.ID, Table: p.Table, Sub: p.Sub, Label: p.Label, Assumed: assume, By: c.by, At: now}
	st.Resolved = append(st.Resolved, r)
	if assume == checkpoint.ResolvedVisible {
		d.MarkSubCommitted(st.Owner, p.Table, p.Sub, now)
	}
	if err := store.Save(ctx, st); err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", checkpointID, err)
	}
	// A crash from here to the append loses the ledger entry; Recover
	// appends it (repairResolved).
	if err := c.fps.fire(ctx, FailResolveBeforeLedger, nil, new(atomic.Bool)); err != nil {
		if errors.Is(err, errCrash) {
			err = ErrCrashed
		}
		return &r, fmt.Errorf("resolve checkpoint %d: recorded in the store, its ledger entry not appended: %w", checkpointID, err)
	}
	if c.ledgerDir != "" {
		lg, err := ledger.Open(c.ledgerDir)
		if err != nil {
			return &r, fmt.Errorf("resolve checkpoint %d: recorded in the store, but: %w", checkpointID, err)
		}
		defer lg.Close()
		note := resolvedNote(r)
		if p.Doris != nil {
			note += "; Doris held the label " + p.Doris.String()
		}
		if err := lg.Append(resolvedEntry(st.Owner, d, r, p.TxnID, note)); err != nil {
			return &r, fmt.Errorf("resolve checkpoint %d: recorded in the store, but: %w", checkpointID, err)
		}
	}
	return &r, nil
}

// whoAmI returns "user@host" for Resolution.By.
func whoAmI() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return name + "@" + host
}
