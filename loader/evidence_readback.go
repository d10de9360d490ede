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

// ledgerTailWindow bounds how much of the ledger's end decidedTally reads:
// the decided entry of the checkpoint Recover commits is one of the last
// few lines, and the ledger grows without bound.
const ledgerTailWindow = 1 << 20

// decidedTally reads back the tally (row counters, attempts, dead-lettered
// count) of the ledger entry that decided d: the last "decided" or
// "healed" entry with d's id, label and txn id within the ledger's last
// ledgerTailWindow bytes. Recover uses it so that the committed entry of a
// checkpoint it commits carries the counts its decision recorded (the
// store's Decision has no counters). ok is false when there is no ledger
// or no such entry; a read error is logged.
func (l *Loader) decidedTally(d *checkpoint.Decision) (t tally, ok bool) {
	if l.ledger == nil {
		return tally{}, false
	}
	entries, err := readLedgerTail(l.ledger.Path(), ledgerTailWindow)
	if err != nil {
		l.log.Warn("read back the decided ledger entry", "id", d.ID, "label", d.Label, "err", err)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if (e.Event == ledger.EventDecided || e.Event == ledger.EventHealed) &&
			e.Checkpoint == d.ID && e.Label == d.Label && e.TxnID == d.TxnID {
			res := &doris.LoadResult{TxnID: e.TxnID, Label: e.Label, NumberTotalRows: e.RowsTotal,
				NumberLoadedRows: e.RowsLoaded, NumberFilteredRows: e.RowsFiltered,
				NumberUnselectedRows: e.RowsUnselected, LoadBytes: e.Bytes}
			return tally{res: res, attempts: e.Attempts, deadLettered: e.DeadLettered}, true
		}
	}
	return tally{}, false
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
