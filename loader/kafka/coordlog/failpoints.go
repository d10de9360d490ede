package coordlog

import (
	"errors"
	"fmt"
)

// Failpoint names of the coordinator log's write path: the cut points of a
// decision's transaction that carries dead letters (Store.StageDeadLetters).
// Each fires only in a Commit with dead letters; Config.Failpoint arms them
// (nil, the default: none).
const (
	// FailDeadLettersProduced fires when the state record and the
	// checkpoint's dead letters are produced in the open transaction and it
	// is not ended. Durable: nothing (a read_committed reader sees none of
	// them; the next incarnation's Open aborts the transaction).
	FailDeadLettersProduced = "coordlog-dead-letters-produced"
	// FailDeadLettersCommitted fires when that transaction is committed
	// (decision, offsets and dead letters visible together) and Commit has
	// not returned: the loader has not seen its decision succeed.
	FailDeadLettersCommitted = "coordlog-dead-letters-committed"
)

// AllFailpoints is the catalogue of this package's failpoint names.
var AllFailpoints = []string{FailDeadLettersProduced, FailDeadLettersCommitted}

// ErrCrashed is wrapped by every call of a Log that a failpoint crashed:
// like a killed process it does nothing more (no abort, no write); only a
// new Log (a new incarnation) continues.
var ErrCrashed = errors.New("coordinator log: crashed at a failpoint")

// fire passes the cut point name: nil to go on; an error crashes the log
// (every later call returns it, wrapping ErrCrashed).
func (l *Log) fire(name string) error {
	if l.cfg.Failpoint == nil {
		return nil
	}
	if err := l.cfg.Failpoint(name); err != nil {
		l.crashed = fmt.Errorf("coordinator log %s: failpoint %s: %w: %w", l.topic, name, ErrCrashed, err)
		return l.crashed
	}
	return nil
}
