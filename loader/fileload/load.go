package fileload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader"
)

// Result is what a Run did (stable JSON names: `doris-sink load -o json`).
type Result struct {
	DB    string   `json:"db"`
	Table string   `json:"table"`
	Files []string `json:"files"`
	Store string   `json:"store"`
	// Rows and Bytes were committed by this run (Doris's loaded rows;
	// streamed bytes, decompressed).
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
	// FilteredRows is the rows Doris dropped (NumberFilteredRows, under
	// max_filter_ratio) in the txns this run committed.
	FilteredRows int64 `json:"filtered_rows"`
	// Txns and Labels are the txns this run committed, in commit order.
	Txns   int      `json:"txns"`
	Labels []string `json:"labels"`
	// Rounds is how many rounds this run committed.
	Rounds int `json:"rounds"`
	// Seconds is the run's wall time; MBps is Bytes / Seconds in MB/s
	// (10^6 bytes).
	Seconds float64 `json:"seconds"`
	MBps    float64 `json:"mb_per_s"`
	// Resumed: this run found a round in flight in the store (decided:
	// committed; announced: aborted) or a partly committed split load.
	Resumed bool `json:"resumed"`
	// Healed counts decided txns that Doris aborted (precommit timeout)
	// and this run loaded again under a new label.
	Healed int `json:"healed"`
	// AlreadyDone: the store says every file was committed before this
	// run; nothing was sent.
	AlreadyDone bool `json:"already_done"`
	// Replanned: the store held an earlier attempt of this load that
	// decided nothing (every txn aborted) with the input files as they
	// were then; they changed, and this run planned them anew.
	Replanned bool `json:"replanned,omitempty"`
	// TotalRows is every row the load committed, over all its runs.
	TotalRows int64 `json:"total_rows"`
}

// Prefix returns the label prefix of the load of files into db.table: "load-"
// and 12 hex digits of a hash of the table and each file's path, size and
// modification time, so a rerun of the same load uses the same labels.
func Prefix(db, table string, files []File) string {
	h := sha256.New()
	h.Write([]byte(db + "\x00" + table + "\x00"))
	for _, f := range files {
		h.Write([]byte(f.Path + "\x00" + strconv.FormatInt(f.Size, 10) + "\x00" + strconv.FormatInt(f.ModTime, 10) + "\x00"))
	}
	return "load-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// DefaultStoreName returns the name of the default store directory of the
// load of paths (as given, made absolute) into db.table: the table and a
// hash of the path list, so the same command finds the same store.
func DefaultStoreName(db, table string, absPaths []string) string {
	h := sha256.Sum256([]byte(db + "\x00" + table + "\x00" + strings.Join(absPaths, "\x00")))
	return label.TableTag(db, table) + "-" + hex.EncodeToString(h[:])[:16]
}

// feLimits are the FE settings that bound a load.
type feLimits struct {
	precommit  time.Duration // stream_load_default_precommit_timeout_second
	maxRunning int           // max_running_txn_num_per_db
}

// run is one Run's working state.
type run struct {
	o       *Options
	part    *loader.Participant
	store   *Store
	st      *State
	res     *Result
	fe      feLimits
	dying   atomic.Bool
	abandon chan struct{}
	crashMu sync.Once
	// firstPrecommit is when the round's first txn precommitted.
	firstPrecommit atomic.Pointer[time.Time]
	// changed, when not nil, is how the input files differ from the ones
	// the store recorded: the decided round (committed by id) may be
	// settled, nothing that reads a file (a heal, a new round) may run.
	changed *MismatchError
}

// Run loads opts.Files into opts.DB.opts.Table (package doc). On return
// without error every row is committed. An error before a round's
// decision leaves it aborted (nothing of it visible) and the store ready
// for a rerun; an error after it leaves the decision in the store, which
// the next Run commits first. With a crash failpoint it returns an error
// matching loader.ErrCrashed and has written nothing since the cut point.
func Run(ctx context.Context, opts Options) (*Result, error) {
	o := &opts
	if err := o.validate(); err != nil {
		return nil, err
	}
	start := o.Now()
	files, err := statFiles(o.Files)
	if err != nil {
		return nil, fmt.Errorf("file load into %s.%s: %w", o.DB, o.Table, err)
	}
	part, err := loader.NewParticipant(o.Client, loader.WithRetry(o.Retry), loader.WithLogger(o.Logger))
	if err != nil {
		return nil, err
	}
	store, err := OpenStore(o.StoreDir)
	if err != nil {
		return nil, fmt.Errorf("file load into %s.%s: %w", o.DB, o.Table, err)
	}
	defer store.Close() // a crash releases the lock too, as a dying process does
	r := &run{o: o, part: part, store: store, abandon: make(chan struct{}),
		res: &Result{DB: o.DB, Table: o.Table, Store: store.Dir(), Labels: []string{}}}
	for _, f := range files {
		r.res.Files = append(r.res.Files, f.Path)
	}
	if err := r.open(files); err != nil {
		return nil, err
	}
	defer func() {
		r.res.Seconds = o.Now().Sub(start).Seconds()
		if r.res.Seconds > 0 {
			r.res.MBps = float64(r.res.Bytes) / 1e6 / r.res.Seconds
		}
		r.res.TotalRows = r.st.Rows
	}()
	if r.st.done() {
		r.res.AlreadyDone = true
		return r.res, nil
	}
	if err := r.limits(ctx); err != nil {
		return nil, err
	}
	if o.Progress != nil {
		o.Progress.Total.Store(remaining(r.st.Files, r.resumeFrom()))
	}
	settles := r.st.Decided != nil
	if err := r.recover(ctx); err != nil {
		return r.res, err
	}
	if r.changed != nil {
		// Refused even when the settled round was the load's last: the
		// files as given now are not the ones loaded (a grown file's new
		// rows would be silently left out).
		return r.res, r.mismatch(settles, "")
	}
	for !r.st.done() {
		if err := r.round(ctx); err != nil {
			return r.res, err
		}
	}
	o.Logger.Info("file load committed", "table", o.DB+"."+o.Table, "rows", r.res.Rows, "txns", r.res.Txns)
	return r.res, nil
}

// open loads or creates the state and checks it is this load's.
func (r *run) open(files []File) error {
	o := r.o
	st, err := r.store.Load()
	if err != nil {
		return fmt.Errorf("file load into %s.%s: %w", o.DB, o.Table, err)
	}
	want := describe(o.DB, o.Table, files)
	if st == nil {
		r.st = &State{DB: o.DB, Table: o.Table, Files: files, Prefix: Prefix(o.DB, o.Table, files)}
		return nil
	}
	have := describe(st.DB, st.Table, st.Files)
	if st.DB != o.DB || st.Table != o.Table {
		return &MismatchError{Dir: r.store.Dir(), Have: have, Want: want, Why: "another table"}
	}
	r.st = st
	if why := sameFiles(st.Files, files); why != "" {
		if st.decidedNothing() {
			// Nothing of the stored load was ever decided or committed
			// (every attempt failed and was aborted: the fix-and-rerun of
			// a load Doris refused): no row of it can be visible, so the
			// files as they are now are simply planned anew. The last
			// attempt's announced labels, which a crash may have left
			// PREPARE or PRECOMMITTED, are carried over and aborted by
			// recover before anything begins; attempt numbers go on.
			o.Logger.Info("file load: input files changed since the last attempt, which decided nothing; planning anew",
				"table", r.table(), "store", r.store.Dir(), "why", why)
			r.st = &State{DB: o.DB, Table: o.Table, Files: files, Prefix: Prefix(o.DB, o.Table, files),
				Attempt: st.Attempt, Announced: st.Announced}
			r.res.Replanned = true
			return nil
		}
		r.changed = &MismatchError{Dir: r.store.Dir(), Have: have, Want: want, Why: why}
		if st.Decided == nil && len(st.Announced) == 0 {
			return r.mismatch(false, "")
		}
		// A decided round is committed whatever happens (docs/design.md
		// §2): committing its txns by id reads no file, so it is settled
		// first; an announced one is aborted by label (no file either,
		// and its txns would otherwise stay PRECOMMITTED until Doris's
		// timeout). Only a heal or a new round needs the files as
		// planned; the run is refused once the round in flight is settled.
		o.Logger.Warn("file load: input files changed since the load was planned; settling the round in flight only",
			"table", r.table(), "store", r.store.Dir(), "why", why)
	}
	r.res.Resumed = st.Decided != nil || len(st.Announced) > 0 || st.Position != (Position{})
	return nil
}

// mismatch returns the refusal of changed files, with what the store has
// committed (settled: this run committed the decided round first; heal:
// the aborted decided txn that would need a file read).
func (r *run) mismatch(settled bool, heal string) *MismatchError {
	e := *r.changed
	e.Rounds, e.Rows, e.Settled, e.Heal = r.st.Rounds, r.st.Rows, settled, heal
	e.Labels = append([]string(nil), r.st.Labels...)
	if heal != "" && r.st.Decided != nil {
		for _, t := range r.st.Decided.Txns {
			if t.Label == heal {
				break
			}
			e.Labels = append(e.Labels, t.Label)
		}
	}
	return &e
}

func describe(db, table string, files []File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	return fmt.Sprintf("%s.%s from [%s]", db, table, strings.Join(names, " "))
}

// resumeFrom is where new rounds start once the round in flight is settled.
func (r *run) resumeFrom() Position {
	if r.st.Decided != nil {
		return r.st.Decided.End
	}
	return r.st.Position
}

// limits reads the FE settings and refuses, before anything begins, a
// load that would exceed them (docs/doris-facts.md §5: a PRECOMMITTED txn
// is aborted stream_load_default_precommit_timeout_second after its
// precommit, FE DatabaseTransactionMgr; max_running_txn_num_per_db caps
// PREPARE+PRECOMMITTED+COMMITTED txns of the db).
func (r *run) limits(ctx context.Context) error {
	o := r.o
	get := func(key string) (int64, error) {
		m, err := o.Client.FrontendConfig(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("file load into %s.%s: read FE config %s (the load's bounds; needs doris.mysql): %w",
				o.DB, o.Table, key, err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(m[key]), 10, 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("file load into %s.%s: FE config %s = %q: want a positive integer", o.DB, o.Table, key, m[key])
		}
		return v, nil
	}
	pre, err := get("stream_load_default_precommit_timeout_second")
	if err != nil {
		return err
	}
	run, err := get("max_running_txn_num_per_db")
	if err != nil {
		return err
	}
	r.fe = feLimits{precommit: time.Duration(pre) * time.Second, maxRunning: int(run)}
	if o.Workers > r.fe.maxRunning {
		return fmt.Errorf("file load into %s.%s: %d workers (one txn each) exceed max_running_txn_num_per_db %d: "+
			"Doris would refuse the txns beyond it; lower --workers", o.DB, o.Table, o.Workers, r.fe.maxRunning)
	}
	left := remaining(r.st.Files, r.resumeFrom())
	if budget := r.roundBudget(); !o.Split && left > budget {
		est := time.Duration(float64(left) / float64(int64(o.Workers)*o.AssumedRate) * float64(time.Second))
		return fmt.Errorf("file load into %s.%s: %d bytes over %d workers at an assumed %d MB/s each take about %v, "+
			"more than half of stream_load_default_precommit_timeout_second (%v): the first txns to precommit could be "+
			"aborted before the last one is; raise --workers or --assume-mbps, or pass --split to load in atomic rounds "+
			"of at most %d bytes", o.DB, o.Table, left, o.Workers, o.AssumedRate>>20, est.Round(time.Second),
			r.fe.precommit, budget)
	}
	return nil
}

// roundBudget is the most estimated bytes one round may stream: W workers
// at the assumed rate for half the precommit timeout.
func (r *run) roundBudget() int64 {
	return int64(r.o.Workers) * r.o.AssumedRate * int64(r.fe.precommit/time.Second) / 2
}

// fire passes a cut point.
func (r *run) fire(ctx context.Context, name string) error {
	return r.o.Failpoints.Fire(ctx, name, r.abandon, &r.dying)
}

// crashed reports whether a crash failpoint acted; the run must then stop
// without writing anything.
func (r *run) crashed(err error) bool {
	if errors.Is(err, loader.ErrCrashed) || r.dying.Load() {
		r.crashMu.Do(func() { close(r.abandon) })
		return true
	}
	return false
}

func (r *run) table() string { return r.o.DB + "." + r.o.Table }

// recover settles the round a previous run left in flight: a decided one
// is committed, an announced one aborted (docs/design.md §2).
func (r *run) recover(ctx context.Context) error {
	if r.st.Decided != nil {
		r.o.Logger.Info("file load: committing the round a previous run decided", "table", r.table(),
			"attempt", r.st.Decided.Attempt, "txns", len(r.st.Decided.Txns))
		return r.commit(context.WithoutCancel(ctx))
	}
	if len(r.st.Announced) > 0 {
		r.o.Logger.Info("file load: aborting the undecided round of a previous run", "table", r.table(),
			"attempt", r.st.Attempt, "labels", len(r.st.Announced))
		if err := r.abortAll(ctx, r.st.Announced); err != nil {
			return err
		}
		r.st.Announced = nil
		if err := r.store.Save(r.st); err != nil {
			return fmt.Errorf("file load into %s: %w", r.table(), err)
		}
	}
	return nil
}

// abortAll aborts every label (by label: the txn ids may be unknown).
func (r *run) abortAll(ctx context.Context, labels []string) error {
	return r.abortLabels(ctx, labels, false)
}

// abortLabels aborts labels; with committedOK a label Doris holds
// COMMITTED or VISIBLE is left alone (it is an earlier run's, see
// ErrLabelAlreadyExists in round).
func (r *run) abortLabels(ctx context.Context, labels []string, committedOK bool) error {
	var errs []error
	for _, l := range labels {
		err := r.part.AbortLabel(ctx, r.o.DB, l)
		if committedOK && errors.Is(err, doris.ErrTxnAlreadyCommitted) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("file load into %s: abort the undecided round (rerun to retry): %w", r.table(), err)
	}
	return nil
}

// round plans, announces, streams, decides and commits one round.
func (r *run) round(ctx context.Context) error {
	o := r.o
	budget := int64(0)
	if o.Split {
		budget = r.roundBudget()
	}
	rd, err := planRound(r.st.Files, r.st.Position, o.Workers, o.ChunkBytes, budget)
	if err != nil {
		return fmt.Errorf("file load into %s: %w", r.table(), err)
	}
	attempt := r.st.Attempt + 1
	labels := make([]string, len(rd.Workers))
	for w := range rd.Workers {
		if labels[w], err = label.BuildSub(r.st.Prefix, o.DB, o.Table, "0", attempt, w); err != nil {
			return fmt.Errorf("file load into %s: %w", r.table(), err)
		}
	}
	if err := r.fire(ctx, loader.FailBeforeAnnounce); err != nil {
		r.crashed(err)
		return err
	}
	r.st.Attempt, r.st.Announced = attempt, labels
	if err := r.store.Save(r.st); err != nil {
		return fmt.Errorf("file load into %s: announce attempt %d: %w", r.table(), attempt, err)
	}
	o.Logger.Info("file load: round announced", "table", r.table(), "attempt", attempt, "workers", len(labels),
		"from", rd.Start, "to", rd.End, "bytes", rd.Bytes)
	txns, err := r.stream(ctx, rd, labels)
	if err != nil {
		if r.crashed(err) {
			return err
		}
		inUse := errors.Is(err, doris.ErrLabelAlreadyExists)
		if aerr := r.abortLabels(context.WithoutCancel(ctx), labels, inUse); aerr != nil {
			return errors.Join(err, aerr)
		}
		if inUse {
			// Labels derive from the load id: the same load already ran
			// with another store (or this one was removed).
			r.st.Announced = nil
			if serr := r.store.Save(r.st); serr != nil {
				err = errors.Join(err, fmt.Errorf("file load into %s: record attempt %d aborted: %w", r.table(), attempt, serr))
			}
			return fmt.Errorf("%w: this load (the same files, sizes and modification times into %s) already ran "+
				"with another store, or its store was removed, so its rows may be in the table already; nothing of this "+
				"run is visible. Check the table; to load the files again anyway, touch them (new load id, new labels)",
				err, r.table())
		}
		r.st.Announced = nil
		if serr := r.store.Save(r.st); serr != nil {
			return errors.Join(err, serr)
		}
		return fmt.Errorf("%w (every txn of attempt %d aborted: nothing of it is visible; rerun to load it again)", err, attempt)
	}
	if err := r.fire(ctx, loader.FailBeforeDecide); err != nil {
		if r.crashed(err) {
			return err
		}
		return r.abortRound(ctx, labels, err)
	}
	if err := r.window(txns); err != nil {
		return r.abortRound(ctx, labels, err)
	}
	r.st.Announced = nil
	r.st.Decided = &Decision{Attempt: attempt, Start: rd.Start, End: rd.End, Txns: txns}
	if err := r.store.Save(r.st); err != nil {
		// Unknown whether the decision is durable: leave it to the rerun,
		// which finds either the announcement (aborts) or the decision
		// (commits).
		return fmt.Errorf("file load into %s: decide attempt %d (rerun to settle it): %w", r.table(), attempt, err)
	}
	o.Logger.Info("file load: round decided", "table", r.table(), "attempt", attempt, "txns", len(txns))
	if err := r.fire(ctx, loader.FailAfterDecide); err != nil {
		r.crashed(err)
		return fmt.Errorf("file load into %s: attempt %d is decided; rerun to commit it: %w", r.table(), attempt, err)
	}
	// Once decided, the commits finish even when ctx ends (a signal):
	// they take seconds, and an interrupted round is only committed later.
	return r.commit(context.WithoutCancel(ctx))
}

// abortRound aborts a round that failed before its decision.
func (r *run) abortRound(ctx context.Context, labels []string, cause error) error {
	if aerr := r.abortAll(context.WithoutCancel(ctx), labels); aerr != nil {
		return errors.Join(cause, aerr)
	}
	r.st.Announced = nil
	if serr := r.store.Save(r.st); serr != nil {
		return errors.Join(cause, serr)
	}
	return fmt.Errorf("file load into %s: %w (every txn of attempt %d aborted: nothing of it is visible; rerun to load it again)",
		r.table(), cause, r.st.Attempt)
}

// window refuses to decide txns the FE may abort before they are all
// committed: the first precommit must be well within the precommit
// timeout.
func (r *run) window(txns []Txn) error {
	first := r.firstPrecommit.Load()
	if first == nil {
		return nil
	}
	age := r.o.Now().Sub(*first)
	margin := min(r.fe.precommit/10, time.Minute)
	if age > r.fe.precommit-margin {
		return fmt.Errorf("the first of %d txns precommitted %v ago and Doris aborts it %v after its precommit "+
			"(stream_load_default_precommit_timeout_second): deciding now could commit part of the round; "+
			"use more workers or --split", len(txns), age.Round(time.Second), r.fe.precommit)
	}
	return nil
}

// commit commits every txn of the decision, in worker order, then records
// the round committed.
func (r *run) commit(ctx context.Context) error {
	d := r.st.Decided
	if err := r.fire(ctx, loader.FailMidCommit); err != nil {
		r.crashed(err)
		return fmt.Errorf("file load into %s: attempt %d is decided; rerun to commit it: %w", r.table(), d.Attempt, err)
	}
	var rows, bytes, filtered int64
	for i, t := range d.Txns {
		c := loader.Committable{DB: r.o.DB, Table: r.o.Table, Label: t.Label, TxnID: t.TxnID}
		err := r.part.Commit(ctx, c)
		if err == nil {
			if ferr := r.fire(ctx, loader.FailAfterCommitResponseLost); ferr != nil {
				if r.crashed(ferr) {
					return ferr
				}
				// The answer counts as lost: commit again, which is
				// idempotent (an already committed txn is success).
				err = r.part.Commit(ctx, c)
			}
		}
		var ab *loader.AbortedError
		if errors.As(err, &ab) {
			// Doris aborted a decided txn (its precommit timed out while
			// this load was down): load its pieces again and commit that.
			if t, err = r.heal(ctx, i, err); err != nil {
				return err
			}
			c = loader.Committable{DB: r.o.DB, Table: r.o.Table, Label: t.Label, TxnID: t.TxnID}
			err = r.part.Commit(ctx, c)
		}
		if err != nil {
			return fmt.Errorf("file load into %s: commit decided txn %d (label %s); rerun to finish the commits: %w",
				r.table(), t.TxnID, t.Label, err)
		}
		if err := r.fire(ctx, loader.FailAfterCommitBeforeLedger); err != nil {
			r.crashed(err)
			return fmt.Errorf("file load into %s: attempt %d is partly committed; rerun to finish it: %w", r.table(), d.Attempt, err)
		}
		rows += t.Rows
		bytes += t.Bytes
		filtered += t.Filtered
		r.res.Txns++
		r.res.Labels = append(r.res.Labels, t.Label)
		if r.o.Progress != nil {
			r.o.Progress.Committed.Add(1)
		}
	}
	r.st.Position, r.st.Decided = d.End, nil
	r.st.Rounds++
	r.st.Rows += rows
	r.st.Bytes += bytes
	for _, t := range d.Txns {
		r.st.Labels = append(r.st.Labels, t.Label)
	}
	if err := r.store.Save(r.st); err != nil {
		return fmt.Errorf("file load into %s: attempt %d is committed but the store could not record it (a rerun commits "+
			"it again, harmlessly): %w", r.table(), d.Attempt, err)
	}
	r.res.Rows += rows
	r.res.Bytes += bytes
	r.res.FilteredRows += filtered
	r.res.Rounds++
	r.o.Logger.Info("file load: round committed", "table", r.table(), "attempt", d.Attempt, "rows", rows, "to", d.End)
	return nil
}

// heal loads the pieces of decided txn i again, under a new label
// (scope "h<n>" for the n-th heal), after Doris aborted it (cause), and
// records the new precommitted txn in the decision. The heal's label is
// announced in the store first; a heal a crash interrupted is aborted by
// label before the next. The other txns of the round are untouched.
func (r *run) heal(ctx context.Context, i int, cause error) (Txn, error) {
	d := r.st.Decided
	t := d.Txns[i]
	r.o.Logger.Warn("file load: Doris aborted a decided txn; loading its pieces again", "table", r.table(),
		"label", t.Label, "txn_id", t.TxnID, "err", cause)
	if r.changed != nil {
		// The heal re-reads t's pieces: the positions must mean the rows
		// they meant when the round was decided.
		return Txn{}, fmt.Errorf("file load into %s: heal of aborted txn %d (label %s, %s): %w", r.table(), t.TxnID,
			t.Label, describePieces(r.st.Files, t.Pieces), r.mismatch(false, t.Label))
	}
	if t.Healing != "" {
		if err := r.part.AbortLabel(ctx, r.o.DB, t.Healing); err != nil {
			return Txn{}, fmt.Errorf("file load into %s: abort the interrupted heal %s: %w", r.table(), t.Healing, err)
		}
	}
	n := t.Heals + 1
	lbl, err := label.BuildSub(r.st.Prefix, r.o.DB, r.o.Table, "h"+strconv.Itoa(n), d.Attempt, t.Worker)
	if err != nil {
		return Txn{}, fmt.Errorf("file load into %s: heal %s: %w", r.table(), t.Label, err)
	}
	d.Txns[i].Healing, d.Txns[i].Heals = lbl, n
	if err := r.store.Save(r.st); err != nil {
		return Txn{}, fmt.Errorf("file load into %s: announce heal %s: %w", r.table(), lbl, err)
	}
	nt, err := r.worker(ctx, t.Worker, lbl, t.Pieces)
	if err != nil {
		if r.crashed(err) {
			return Txn{}, err
		}
		if aerr := r.part.AbortLabel(context.WithoutCancel(ctx), r.o.DB, lbl); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return Txn{}, fmt.Errorf("file load into %s: heal of aborted txn %d (label %s, %s) failed; rerun to heal again: %w",
			r.table(), t.TxnID, t.Label, describePieces(r.st.Files, t.Pieces), err)
	}
	nt.Heals = n
	d.Txns[i] = nt
	if err := r.store.Save(r.st); err != nil {
		return Txn{}, fmt.Errorf("file load into %s: record heal %s: %w", r.table(), lbl, err)
	}
	r.res.Healed++
	return nt, nil
}

func describePieces(files []File, ps []Piece) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s bytes %d-%d", files[p.File].Path, p.Range.Start, p.Range.End)
	}
	return strings.Join(parts, ", ")
}
