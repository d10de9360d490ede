package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// A fence check that reports fencing stops an idle Run with that error;
// the open checkpoint is not decided and its transaction is aborted.
// Other check errors are only logged.
func TestFenceCheckStopsIdleRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 5, 1)
	var armed, calls atomic.Int32
	fenced := fmt.Errorf("job x: %w", checkpoint.ErrFenced)
	check := func(context.Context) error {
		calls.Add(1)
		if armed.Load() == 0 {
			return errors.New("coordinator not reachable") // logged, retried
		}
		return fenced
	}
	c := e.connector(e.config(), nil, WithFenceCheck(check, time.Millisecond))
	c.knobs.AfterPoll = func(p Position) {
		if p.Offsets[0] >= 5 && calls.Load() > 1 {
			armed.Store(1) // every record read, nothing to save: idle
		}
	}
	err := c.Run(ctxFor(t))
	if !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("Run: %v, want the fencing error", err)
	}
	if rows := e.ids(); len(rows) != 0 {
		t.Errorf("rows %v loaded by a fenced run, want none (nothing decided)", rows)
	}
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txns {
		if tx.Status != doris.TxnAborted {
			t.Errorf("txn %d (%s) is %s after the fenced stop, want ABORTED", tx.ID, tx.Label, tx.Status)
		}
	}
}
