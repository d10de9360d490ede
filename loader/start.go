package loader

import (
	"encoding/json"
	"fmt"
	"slices"
)

// SetStart records where the first checkpoint of a store without a
// decision starts: the source position the caller resolved for its first
// start (for the Kafka connector, the offsets kafka.start chose). Call it
// after a Recover that returned nil (a new store, or one whose every
// checkpoint so far failed undecided) and before the Checkpoint that
// decides; every later decision starts where the previous one ended.
//
// Without it the first decision's start is nil, and if Doris later aborts
// that checkpoint's transaction (e.g. "timeout by txn manager"), the
// Recover that heals it returns nil, which the caller cannot tell from a
// new store: it would resolve its first start again and, with a start
// such as "latest", skip the decided rows (docs/design.md §2, invariant 5).
//
// SetStart is refused once the store holds a decision (the start is then
// the position Recover returned) and for a raw that is not valid JSON.
// A Recover resets it.
func (l *Loader) SetStart(raw json.RawMessage) error {
	if err := l.usable(); err != nil {
		return err
	}
	if len(raw) == 0 || !json.Valid(raw) {
		return fmt.Errorf("set start: position %q is not valid JSON", raw)
	}
	l.smu.Lock()
	d := l.state.Decided
	l.smu.Unlock()
	if d != nil {
		return fmt.Errorf("set start %s: the checkpoint store holds decision %d (label %s): "+
			"the start is the position Recover returned (%s)", raw, d.ID, d.Label, posString(l.pos))
	}
	l.first = slices.Clone(raw)
	return nil
}

// start is the start of the checkpoint being written: the last decided
// end (or, while healing, the healed checkpoint's start), else the
// caller's first-start position (SetStart).
func (l *Loader) start() json.RawMessage {
	if l.pos != nil {
		return l.pos
	}
	return l.first
}

// Healing reports whether the checkpoint being written heals a decided
// checkpoint whose transaction Doris aborted (Recover returned its start,
// docs/design.md §2 recovery table), and that checkpoint's id and decided
// end: the caller replays its range up to end before the heal is decided.
// Call it from the goroutine that uses the Loader.
func (l *Loader) Healing() (id uint64, end json.RawMessage, ok bool) {
	if l.cur == nil || l.cur.heal == nil {
		return 0, nil, false
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	if l.state == nil || l.state.Decided == nil || l.state.Decided.ID != l.cur.id {
		return 0, nil, false
	}
	return l.cur.id, slices.Clone(l.state.Decided.End), true
}
