package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// applyOperator applies the newest operator record of the job's Kafka state
// topic (`checkpoint resolve` with job.coordinator kafka writes one instead
// of the job's own state record, so it never fences a running job) at
// start, before recovery: when it still names the decided checkpoint (same
// id, label and txn, not committed, not yet resolved that way), it is
// recorded through loader.ResolveAssume on the job's own fenced store,
// re-checked against Doris (an assumption Doris now contradicts is
// refused), with a "resolved" ledger entry in job.data_dir (a crash before
// that entry leaves it to the loader's Recover to append). A record that
// no longer applies (the checkpoint moved on or was settled) is ignored
// and logged.
func applyOperator(ctx context.Context, st *coordlog.Store, cfg *config.Config, d Deps) error {
	op, ok, err := st.PendingOperator(ctx)
	if err != nil || !ok {
		return err
	}
	state, err := st.Load(ctx)
	if err != nil {
		return err
	}
	log := d.Logger.With("state_topic", st.Log().Topic(), "operator_offset", op.Offset, "checkpoint", op.Checkpoint,
		"label", op.Label, "assumed", op.Assumed, "by", op.By)
	if !jobstate.OperatorPending(state, op) {
		log.Debug("operator record does not apply to the current state (settled or superseded)")
		return nil
	}
	at := time.Now()
	if op.At.After(at) {
		at = op.At // never record it before the operator decided it
	}
	opts := []loader.ResolveOpt{loader.ResolveBy(op.By), loader.ResolveClock(func() time.Time { return at }),
		loader.ResolveLedger(cfg.Job.DataDir), loader.ResolveFailpoints(d.Failpoints)}
	if op.Table != "" {
		// The record names the txn the operator resolved: its table and
		// sub-load (one of several uncommitted sub-loads of a table).
		opts = append(opts, loader.ResolveTable(op.Table), loader.ResolveSub(op.Sub))
	}
	if rd, ok := d.Doris.(loader.ResolveDoris); ok {
		opts = append(opts, loader.ResolveCheck(rd, cfg.Doris.Database))
	}
	_, err = loader.ResolveAssume(ctx, st, op.Checkpoint, op.Assumed, opts...)
	switch {
	case errors.Is(err, loader.ErrNothingToResolve):
		log.Info("operator record needs nothing more", "reason", err)
		return nil
	case err != nil:
		return fmt.Errorf("apply the operator's `checkpoint resolve --checkpoint %d --assume %s` (by %s, state topic %s offset %d): %w",
			op.Checkpoint, op.Assumed, op.By, st.Log().Topic(), op.Offset, err)
	}
	log.Warn("operator resolution applied from the state topic")
	return nil
}
