package txn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	lbl "github.com/doris-sink/doris-sink/label"
)

// OwnedLabelError refuses `txn commit|abort` of a transaction whose label a
// doris-sink job owns, when acting on it would break what the job's
// checkpoint store promises (docs/design.md §2: decided labels are committed,
// announced ones aborted). Nothing was sent to Doris.
type OwnedLabelError struct {
	Op    Operation
	Label string
	TxnID int64
	// Job and Checkpoint are the owning job and checkpoint id.
	Job        string
	Checkpoint uint64
	// Why says what would go wrong; Instead is the command to use.
	Why, Instead string
}

// Error names the label, the owner, why, and what to run instead.
func (e *OwnedLabelError) Error() string {
	return fmt.Sprintf("refusing to %s label %s (txn %d) of job %q checkpoint %d: %s; instead: %s",
		e.Op, e.Label, e.TxnID, e.Job, e.Checkpoint, e.Why, e.Instead)
}

// guard decides whether o may act on label l (txn id, as Doris holds it).
// Labels that do not parse as doris-sink labels are not guarded. A
// doris-sink label is checked against the store of the job named by -c
// (job.name, job.data_dir); without that job's config the act is refused
// unless --force. When the act may proceed it returns the line for stderr
// ("Note: …" or "Warning: …").
//
// The choice (refuse, never record): an announced label has no source
// range in the store, so a commit the store recorded would still make the
// job load its rows again; a decided txn must be committed, never aborted.
// Everything the job itself would do on restart is allowed.
func (o *DecideOptions) guard(ctx context.Context, cfg *config.Config, l string, txnID int64) (string, error) {
	p, err := lbl.Parse(l)
	if err != nil {
		return "", nil // not a doris-sink label
	}
	if o.Force {
		return fmt.Sprintf("Warning: --force: label %s was not checked against job %q's checkpoint store", l, p.Prefix), nil
	}
	if cfg.Job.Name != p.Prefix || cfg.Job.DataDir == "" {
		return "", fmt.Errorf("label %s belongs to doris-sink job %q: pass that job's config (-c) so its checkpoint "+
			"store can be checked, or --force if no job's store knows this label", l, p.Prefix)
	}
	v, err := jobstate.Open(ctx, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		where := "in " + cfg.Job.DataDir
		if cfg.Job.Coordinator == config.CoordinatorKafka {
			where = "(" + err.Error() + ")"
		}
		return fmt.Sprintf("Warning: job %q has no checkpoint store %s: nothing guards label %s", p.Prefix, where, l), nil
	}
	if err != nil {
		return "", fmt.Errorf("check label %s against job %q: %w (or pass --force)", l, p.Prefix, err)
	}
	owner := v.State.Owner
	if s := v.SlotByScope(p.Scope); s != nil { // group mode: the label's writer slot
		owner = s.State.Owner
	}
	if own, err := owner.Label(p.Checkpoint); err != nil || own != l {
		return "", fmt.Errorf("label %s is not of the store in %s (%s): pass the config of the job's table, or --force",
			l, v.Where(), owner)
	}
	labels, _ := v.Find(l)
	refuse := func(why, instead string) error {
		return &OwnedLabelError{Op: o.Op, Label: l, TxnID: txnID, Job: p.Prefix, Checkpoint: p.Checkpoint, Why: why, Instead: instead}
	}
	cfgFlag := ""
	if o.ConfigFile != "" {
		cfgFlag = " -c " + o.ConfigFile
	}
	for _, x := range labels {
		switch {
		case x.Role == jobstate.RoleAnnounced && o.Op == Commit:
			return "", refuse("it is announced and not decided: the store holds no source range for it, so the job "+
				"would load its rows again (duplicates) and then stop with a fencing violation",
				fmt.Sprintf("restart the job (recovery aborts it), or `doris-sink txn abort --label %s%s --yes`", l, cfgFlag))
		case x.Role == jobstate.RoleAnnounced:
			return "Note: the job announced this label and never decided it: its recovery aborts it too", nil
		case x.Role == jobstate.RoleDecided && !x.Committed && txnID != 0 && txnID != x.TxnID:
			if o.Op == Commit {
				return "", refuse(fmt.Sprintf("txn %d is not the decided txn %d: it is an undecided heal attempt", txnID, x.TxnID),
					"restart the job: recovery aborts the attempt and heals the checkpoint")
			}
			return fmt.Sprintf("Note: txn %d is an undecided heal attempt of decided txn %d: recovery aborts it too", txnID, x.TxnID), nil
		case x.Role == jobstate.RoleDecided && !x.Committed && o.Op == Abort:
			return "", refuse("it is decided: the job has promised to commit it (docs/design.md §2 invariant 2); aborting it "+
				"forces a replay from the source, which loses its rows if they are no longer there",
				fmt.Sprintf("restart the job (recovery commits it), or `doris-sink txn commit %d%s --yes`", x.TxnID, cfgFlag))
		case x.Role == jobstate.RoleDecided && !x.Committed:
			return fmt.Sprintf("Note: checkpoint %d is decided: committing its txn is what the job's recovery does", x.Checkpoint), nil
		}
	}
	return fmt.Sprintf("Note: the store of job %q holds label %s as committed or does not know it", p.Prefix, l), nil
}
