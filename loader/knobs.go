package loader

import (
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// TestingKnobs are hooks for tests (cockroach style): each field is nil by
// default (no effect) and documents when it runs. Knobs observe; they run
// on the loader's goroutines and must not call back into the Loader.
// Failpoints, not knobs, crash or fail the loader at cut points.
type TestingKnobs struct {
	// AfterAnnounce runs after the announcement of checkpoint id is
	// durable (its own write or riding on a decision).
	AfterAnnounce func(id uint64, label string)
	// AfterPrecommit runs when Doris precommitted checkpoint id.
	AfterPrecommit func(id uint64, res *doris.LoadResult)
	// AfterDecide runs after decision id is durable, before its commit.
	AfterDecide func(id uint64)
	// AfterCommit runs when checkpoint id is committed and recorded (store
	// and ledger), or its commit failed for good (err non-nil).
	AfterCommit func(id uint64, err error)
	// AfterRecoverLabel runs for each label Recover examined, with the state
	// Doris reported and the action taken ("done", "commit", "heal",
	// "abort", "none", "fencing", "unresolved").
	AfterRecoverLabel func(label string, state doris.TxnStatus, action string)
	// BeforeCommitAttempt runs before each commit request of checkpoint id
	// (attempt counts from 1).
	BeforeCommitAttempt func(id uint64, attempt int)
	// MeasureSubLoads, when set, replaces what checkpoint id's loads of
	// table (K sub-loads) measured before the K controller of
	// Config.SubLoadsAuto sees it: tests drive doris.sub_loads: auto
	// without timing. The one knob that alters, not observes.
	MeasureSubLoads func(id uint64, table string, k int, m SubLoadsMeasure) SubLoadsMeasure
}

// SubLoadsMeasure is what one checkpoint's loads of one table measured
// (Config.SubLoadsAuto): the body bytes handed to Doris, how long the
// writer was blocked handing them over, and the checkpoint's wall time.
type SubLoadsMeasure struct {
	Bytes   int64
	Blocked time.Duration
	Wall    time.Duration
}
