package loader

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ResolveOpt configures ResolveAssume.
type ResolveOpt interface{ apply(*resolveCfg) }

type resolveCfg struct {
	by        string
	ledgerDir string
	now       func() time.Time
}

type resolveOpt func(*resolveCfg)

func (f resolveOpt) apply(c *resolveCfg) { f(c) }

// ResolveBy names who resolves (default "user@host" of this process).
func ResolveBy(who string) ResolveOpt { return resolveOpt(func(c *resolveCfg) { c.by = who }) }

// ResolveLedger appends a "resolved" entry to the ledger in dir.
func ResolveLedger(dir string) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.ledgerDir = dir })
}

// ResolveClock sets the clock of the resolution time (default time.Now).
func ResolveClock(now func() time.Time) ResolveOpt {
	return resolveOpt(func(c *resolveCfg) { c.now = now })
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
func ResolveAssume(ctx context.Context, store checkpoint.Store, checkpointID uint64, assume string, opts ...ResolveOpt) (*checkpoint.Resolution, error) {
	c := resolveCfg{now: time.Now}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.by == "" {
		c.by = whoAmI()
	}
	if assume != checkpoint.ResolvedVisible && assume != checkpoint.ResolvedAborted {
		return nil, fmt.Errorf("resolve checkpoint %d: --assume %q: want %q or %q", checkpointID, assume,
			checkpoint.ResolvedVisible, checkpoint.ResolvedAborted)
	}
	st, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", checkpointID, err)
	}
	d := st.Decided
	switch {
	case d == nil:
		return nil, fmt.Errorf("resolve checkpoint %d: nothing is decided in this store", checkpointID)
	case d.ID != checkpointID:
		return nil, fmt.Errorf("resolve checkpoint %d: only the last decided checkpoint (%d) can be resolved", checkpointID, d.ID)
	case d.Committed:
		return nil, fmt.Errorf("resolve checkpoint %d: it is already marked committed; nothing to resolve", checkpointID)
	case d.Empty:
		return nil, fmt.Errorf("resolve checkpoint %d: it is empty (no transaction); Recover marks it committed", checkpointID)
	}
	now := c.now()
	r := checkpoint.Resolution{CheckpointID: d.ID, Label: d.Label, Assumed: assume, By: c.by, At: now}
	st.Resolved = append(st.Resolved, r)
	if assume == checkpoint.ResolvedVisible {
		d.Committed, d.CommittedAt = true, now
	}
	if err := store.Save(ctx, st); err != nil {
		return nil, fmt.Errorf("resolve checkpoint %d: %w", checkpointID, err)
	}
	if c.ledgerDir != "" {
		lg, err := ledger.Open(c.ledgerDir)
		if err != nil {
			return &r, fmt.Errorf("resolve checkpoint %d: recorded in the store, but: %w", checkpointID, err)
		}
		defer lg.Close()
		e := ledger.Entry{Time: now, Event: ledger.EventResolved, Checkpoint: d.ID, Job: st.Owner.Job, DB: st.Owner.DB,
			Table: st.Owner.Table, Label: d.Label, TxnID: d.TxnID, DecidedAt: d.DecidedAt,
			Ranges: rangesJSON(d.Start, d.End), Note: "operator assumed " + assume + " (by " + c.by + ")"}
		if err := lg.Append(e); err != nil {
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
