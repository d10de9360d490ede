package loader

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ledgerTailWindow bounds how much of the ledger's end Recover reads back
// (decidedTally, repairCommittedEvidence): the entries of the last decided
// checkpoint are among the last few lines, and the ledger grows without
// bound. An entry beyond the window counts as missing.
const ledgerTailWindow = 1 << 20

// decidedTally reads back the tally (row counters, attempts, dead-lettered
// count) of the ledger entry that decided d: the last "decided" or
// "healed" entry with d's id, label and txn id within the ledger's last
// ledgerTailWindow bytes. Recover uses it so that the committed entry of a
// checkpoint it commits carries the counts its decision recorded (the
// store's Decision has no counters). ok is false when there is no ledger
// or no such entry; a read error is logged.
func (l *Loader) decidedTally(d *checkpoint.Decision) (t tally, ok bool) {
	return findDecidedTally(l.ledgerTail(d), d)
}

func findDecidedTally(entries []ledger.Entry, d *checkpoint.Decision) (t tally, ok bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if (e.Event == ledger.EventDecided || e.Event == ledger.EventHealed) && sameTxn(e, d) {
			res := &doris.LoadResult{TxnID: e.TxnID, Label: e.Label, NumberTotalRows: e.RowsTotal,
				NumberLoadedRows: e.RowsLoaded, NumberFilteredRows: e.RowsFiltered,
				NumberUnselectedRows: e.RowsUnselected, LoadBytes: e.Bytes}
			return tally{res: res, attempts: e.Attempts, deadLettered: e.DeadLettered}, true
		}
	}
	return tally{}, false
}

// repairCommittedEvidence appends the "committed" entry of d, which the
// store says is committed, when the ledger's tail has none (DESIGN.md §6:
// one row per checkpoint). The store's commit mark and the ledger append
// are two durable writes: a process killed between them (the store's
// rename is visible, its directory fsync or the append had not returned)
// leaves a committed checkpoint whose rows the ledger never counts, and
// Recover, which trusts the store's mark, would never look at it again.
// The entry carries the decided entry's counters when they are found. An
// operator's "resolved" entry for d stands for its commit (assumed
// visible): nothing is added then.
func (l *Loader) repairCommittedEvidence(d *checkpoint.Decision) {
	if l.ledger == nil || d == nil || !d.Committed {
		return
	}
	entries := l.ledgerTail(d)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if (e.Event == ledger.EventCommitted || e.Event == ledger.EventResolved) && sameTxn(e, d) {
			return
		}
	}
	t, ok := findDecidedTally(entries, d)
	note := "recovery: the store recorded the commit, the ledger had no committed entry (crash between the two writes)"
	state := doris.TxnVisible
	switch {
	case d.Empty:
		state = ""
		note += "; empty checkpoint: no transaction"
	case !ok && l.cfg.Guarantee == ExactlyOnce:
		note += "; row counts unknown: the decided entry is not in the ledger"
	case !ok:
		note += "; row counts unknown (at-least-once load)"
	}
	l.log.Warn("recover: the ledger lacked the committed entry of the last decided checkpoint; appending it",
		"id", d.ID, "label", d.Label, "txn_id", d.TxnID)
	l.evidence(ledger.EventCommitted, *d, state, t, note)
}

// sameTxn reports whether ledger entry e is about d's transaction.
func sameTxn(e ledger.Entry, d *checkpoint.Decision) bool {
	return e.Checkpoint == d.ID && e.Label == d.Label && e.TxnID == d.TxnID
}

// ledgerTail returns the entries of the ledger's last ledgerTailWindow
// bytes (nil without a ledger); a read error is logged.
func (l *Loader) ledgerTail(d *checkpoint.Decision) []ledger.Entry {
	if l.ledger == nil {
		return nil
	}
	entries, err := readLedgerTail(l.ledger.Path(), ledgerTailWindow)
	if err != nil {
		l.log.Warn("read back the ledger", "id", d.ID, "label", d.Label, "err", err)
	}
	return entries
}

// readLedgerTail parses the complete lines of the last window bytes of the
// ledger file at path (a line cut by the window's start is skipped; a torn
// last line is left out). On a malformed line it returns the entries
// before it with the error.
func readLedgerTail(path string, window int64) ([]ledger.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat ledger: %w", err)
	}
	// Read one byte before the window too: it tells whether the window
	// starts a line.
	off := max(fi.Size()-window-1, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := io.ReadFull(io.NewSectionReader(f, off, int64(len(buf))), buf); err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", path, err)
	}
	if off > 0 {
		// Drop the line the window cut (or just the newline before it).
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, nil
		}
		buf = buf[i+1:]
	}
	entries, _, err := ledger.Read(bytes.NewReader(buf))
	if err != nil {
		return entries, fmt.Errorf("ledger %s: %w", path, err)
	}
	return entries, nil
}
