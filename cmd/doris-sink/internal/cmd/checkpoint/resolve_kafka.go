package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// readOnlyStore is a checkpoint.Store over a state read from Kafka, for
// loader.PlanResolve: Load returns a copy, Save refuses (the operator
// never writes the job's own state record: that would need the job's
// transactional id and fence a running job).
type readOnlyStore struct{ st *checkpoint.State }

func (s readOnlyStore) Load(context.Context) (*checkpoint.State, error) { return s.st.Clone(), nil }

func (s readOnlyStore) Save(context.Context, *checkpoint.State) error {
	return errors.New("the Kafka state read by an operator command is read-only")
}

func (readOnlyStore) Close() error { return nil }

// resolveKafka is `checkpoint resolve` with job.coordinator kafka: plan
// against the state read from the state topic (read-only) and Doris, then
// write the decision as an operator record (coordlog.WriteOperator: its
// own key and transactional id, so a running job is never fenced). The
// job applies it at its next start, re-checking it against its state and
// Doris, and records it in its state (State.Resolved) and its ledger.
// --slot J resolves writer slot J's decided checkpoint: the record is of
// scope J, which slot J's owner applies.
func (o *ResolveOptions) resolveKafka(ctx context.Context, cfg *config.Config, client loader.ResolveDoris) error {
	kopts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return err
	}
	sn, err := coordlog.ReadSnapshot(ctx, cfg.Job.Name, kopts)
	if err != nil {
		return fmt.Errorf("resolve checkpoint %d: %w", o.Checkpoint, err)
	}
	v, err := jobstate.FromSnapshot(sn, "")
	if err != nil {
		return fmt.Errorf("resolve checkpoint %d: %w", o.Checkpoint, err)
	}
	scope := coordlog.SlotScope(o.Slot)
	slot := v.SlotByNumber(o.Slot)
	if slot == nil {
		return fmt.Errorf("resolve checkpoint %d: %w", o.Checkpoint, &coordlog.NoStateError{Job: cfg.Job.Name, Topic: sn.Topic, Scope: scope})
	}
	if slot.Retired {
		return fmt.Errorf("resolve checkpoint %d: writer scope %s is retired (the job has %d slots since `checkpoint reslot`): "+
			"nothing of it is ever resumed", o.Checkpoint, scope, v.SlotCount)
	}
	st := slot.State
	if ow := st.Owner; ow.Job != cfg.Job.Name || ow.DB != cfg.Doris.Database || ow.Table != cfg.Doris.Table {
		return fmt.Errorf("state topic %s belongs to job %s table %s.%s, not to this config (job %s table %s.%s)",
			sn.Topic, ow.Job, ow.DB, ow.Table, cfg.Job.Name, cfg.Doris.Database, cfg.Doris.Table)
	}
	opts := []loader.ResolveOpt{loader.ResolveCheck(client, cfg.Doris.Database)}
	if o.Table != "" {
		opts = append(opts, loader.ResolveTable(o.Table))
	}
	if o.Sub >= 0 {
		opts = append(opts, loader.ResolveSub(o.Sub))
	}
	p, err := loader.PlanResolve(ctx, readOnlyStore{st}, o.Checkpoint, o.Assume, opts...)
	if err != nil {
		return err
	}
	res := ResolveResult{Checkpoint: p.CheckpointID, Table: p.Table, Label: p.Label, TxnID: p.TxnID, Assumed: p.Assumed,
		Action: p.Action, Reason: p.Reason, Doris: p.Doris, DryRun: o.DryRun, StateTopic: sn.Topic, Scope: scope}
	if op := slot.Operator; p.Action == loader.ResolveRecord && op != nil && slot.Pending && op.Assumed == o.Assume &&
		op.Label == p.Label {
		res.Action, res.Offset = loader.ResolveNothing, &op.Offset
		res.Reason = fmt.Sprintf("--assume %s is already written to state topic %s (offset %d, by %s); the job applies it at its next start",
			o.Assume, sn.Topic, op.Offset, op.By)
	}
	if o.DryRun || res.Action == loader.ResolveNothing {
		return o.print(res)
	}
	fmt.Fprintf(o.IO.ErrOut, "Warning: a wrong --assume %s %s.\n", o.Assume,
		map[string]string{checkpoint.ResolvedVisible: "loses the checkpoint's rows", checkpoint.ResolvedAborted: "loads its rows twice"}[o.Assume])
	action := fmt.Sprintf("record checkpoint %d (%s) of writer slot %s as %s in state topic %s", o.Checkpoint, res.Label, scope, o.Assume, sn.Topic)
	if err := cmdutil.Confirm(o.IO, o.Yes, action); err != nil {
		return err
	}
	now := time.Now
	if o.Factory.Now != nil {
		now = o.Factory.Now
	}
	op := coordlog.Operator{Kind: coordlog.OperatorResolve, Checkpoint: p.CheckpointID, Label: p.Label, TxnID: p.TxnID, Table: p.Table, Sub: p.Sub,
		Assumed: o.Assume, By: whoAmI(), At: now().UTC(), StateOffset: slot.Offset}
	if p.Doris != nil {
		op.Doris = p.Doris.String()
	}
	off, err := coordlog.WriteOperator(ctx, coordlog.Config{Job: cfg.Job.Name, Scope: scope, ClientOpts: kopts}, op)
	if err != nil {
		return fmt.Errorf("resolve checkpoint %d: %w", o.Checkpoint, err)
	}
	res.By, res.Offset = op.By, &off
	res.Reason += "; written to state topic " + sn.Topic + ": the job applies it at its next start (restart it if it runs)"
	return o.print(res)
}

// whoAmI returns "user@host" (loader.ResolveBy's default, which the job
// cannot compute for the operator: it applies the record elsewhere).
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
