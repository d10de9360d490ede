package loader

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ledgerTailWindow bounds how much of the ledger's end Recover reads back
// (repairEvidence): the entries of the last decided checkpoint are among
// the last few lines, and the ledger grows without bound. An entry beyond
// the window counts as missing.
const ledgerTailWindow = 1 << 20

// repairEvidence appends the ledger entry of d, the last decided
// checkpoint, that a crash between a store write and its ledger append left
// out (docs/design.md §6: the ledger records every decision and every commit).
// The ledger is read back only to find out whether the entry is there; the
// entry itself is written from d, whose Counts the decision saved:
//
//   - d not committed (and not Empty) and no "decided" or "healed" entry of
//     its txn: the process died between the save that decided d and the
//     append of that entry. It is appended ("healed" when d is a heal).
//     Without it the ledger would never count d's rows: Doris cannot report
//     a load's counters later.
//   - d committed in the store and no "committed" entry: the process died
//     between the commit mark (in the store's rename) and the append, and
//     Recover, which trusts the mark, would never look at d again. The
//     "committed" entry is appended. An operator's "resolved" entry for d
//     stands for its commit (assumed visible): nothing is added then.
//
// Each txn of d has its own entries (txnEvidence): the check and repair
// are per txn.
func (l *Loader) repairEvidence(d *checkpoint.Decision) {
	if l.ledger == nil || d == nil || (d.Empty && !d.Committed) {
		return
	}
	entries := l.ledgerTail(d)
	if d.Empty {
		e := checkpoint.Txn{Label: d.Label}
		if hasEntry(entries, d, e, ledger.EventCommitted, ledger.EventResolved) {
			return
		}
		l.log.Warn("recover: the ledger lacked the committed entry of the last decided checkpoint; appending it",
			"id", d.ID, "label", d.Label)
		l.evidence(ledger.EventCommitted, *d, "", "recovery: the store recorded the commit, the ledger had no committed "+
			"entry (crash between the two writes); empty checkpoint: no transaction")
		return
	}
	for i, t := range d.Txns {
		dl := deadLetteredOf(d, i)
		if !t.Committed {
			if hasEntry(entries, d, t, ledger.EventDecided, ledger.EventHealed) {
				continue
			}
			event := ledger.EventDecided
			if t.Healed > 0 {
				event = ledger.EventHealed
			}
			l.log.Warn("recover: the ledger lacked the "+event+" entry of the last decided checkpoint; appending it",
				"id", d.ID, "table", t.Table, "label", t.Label, "txn_id", t.TxnID)
			l.txnEvidence(event, d, t, dl, doris.TxnPrecommitted, "recovery: the store recorded the decision, the ledger had no "+
				event+" entry (crash between the two writes)"+countsUnknown(t))
			continue
		}
		if hasEntry(entries, d, t, ledger.EventCommitted, ledger.EventResolved) {
			continue
		}
		l.log.Warn("recover: the ledger lacked the committed entry of the last decided checkpoint; appending it",
			"id", d.ID, "table", t.Table, "label", t.Label, "txn_id", t.TxnID)
		l.txnEvidence(ledger.EventCommitted, d, t, dl, doris.TxnVisible,
			"recovery: the store recorded the commit, the ledger had no committed entry (crash between the two writes)"+
				countsUnknown(t))
	}
}

// countsUnknown is the note suffix of an entry written from a txn without
// counts (its decision saved by a doris-sink that did not record them), ""
// when t has counts.
func countsUnknown(t checkpoint.Txn) string {
	if t.Counts != nil {
		return ""
	}
	return "; row counts unknown: the decision was saved without them (older doris-sink)"
}

// hasEntry reports whether entries hold one of events about txn t of d
// (same checkpoint id, label and txn id: a heal's entries name its new
// txn).
func hasEntry(entries []ledger.Entry, d *checkpoint.Decision, t checkpoint.Txn, events ...string) bool {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Checkpoint == d.ID && e.Label == t.Label && e.TxnID == t.TxnID && slices.Contains(events, e.Event) {
			return true
		}
	}
	return false
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
