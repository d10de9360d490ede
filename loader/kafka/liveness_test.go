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
	var readAll atomic.Bool
	var calls atomic.Int32
	fenced := fmt.Errorf("job x: %w", checkpoint.ErrFenced)
	// The check fails once or more (logged, retried), then, once every
	// record is read (nothing to save: idle), reports the fence. Arming it
	// from the check, not from a poll, needs no poll after the last
	// record (under load every record came in the first poll, before a
	// second check, and the run waited out its minute).
	check := func(context.Context) error {
		if n := calls.Add(1); n == 1 || !readAll.Load() {
			return errors.New("coordinator not reachable")
		}
		return fenced
	}
	c := e.connector(e.config(), nil, WithFenceCheck(check, time.Millisecond))
	c.knobs.AfterPoll = func(p Position) {
		if p.Offsets[0] >= 5 {
			readAll.Store(true)
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
