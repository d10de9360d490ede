package doristest

// Behavior (docs/doris-facts.md §4, §2.3, FE-NF / FE-LAU / FE-DTM):
//   - A label must match ^[-_A-Za-z0-9:]{1,N}$ with N = label_regex_length
//     (128); else "Label format error. regex: <re>, label: <label>".
//   - Labels are scoped per database. A label conflicts with any of its txns
//     that is not ABORTED; it is reusable as soon as its txn is ABORTED or
//     cleaned (see cleaner.go).
//   - ExistingJobStatus of a conflict: PREPARE/UNKNOWN → RUNNING,
//     PRECOMMITTED → PRECOMMITTED, COMMITTED/VISIBLE → FINISHED.
//   - An empty label on the BE becomes a random UUID with dashes (§1.4).

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"slices"

	"github.com/doris-sink/doris-sink/doris"
)

func labelRegex(maxLen int64) string {
	return fmt.Sprintf("^[-_A-Za-z0-9:]{1,%d}$", maxLen)
}

// checkLabelLocked is FeNameFormat.checkLabel.
func (s *Server) checkLabelLocked(label string) *feError {
	re := labelRegex(s.feConf(ConfLabelRegexLength))
	ok := false
	// Go's RE2 caps repetition counts at 1000; longer limits are checked by hand.
	if n := s.feConf(ConfLabelRegexLength); n <= 1000 {
		ok = regexp.MustCompile(re).MatchString(label)
	} else {
		ok = len(label) >= 1 && int64(len(label)) <= n && regexp.MustCompile(`^[-_A-Za-z0-9:]+$`).MatchString(label)
	}
	if !ok {
		return analysisErr("Label format error. regex: %s, label: %s", re, label)
	}
	return nil
}

// existingJobStatus maps the conflicting txn's state (LabelAlreadyUsedException).
func existingJobStatus(st doris.TxnStatus) string {
	switch st {
	case doris.TxnPrecommitted:
		return "PRECOMMITTED"
	case doris.TxnCommitted, doris.TxnVisible:
		return "FINISHED"
	default:
		return "RUNNING"
	}
}

// newUUID returns a random RFC 4122 version 4 UUID string.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// LabelState is get_load_state for db/label: the state of the label's latest
// txn, UNKNOWN when the label was never used, was cleaned, or db does not
// exist (docs/doris-facts.md §6.1).
func (s *Server) LabelState(db, label string) doris.TxnStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	d, ok := s.dbs[db]
	if !ok {
		return doris.TxnUnknown
	}
	if t := d.txns.latest(label); t != nil {
		return t.status
	}
	return doris.TxnUnknown
}

// TxnByLabel returns the latest txn of label in db (SHOW TRANSACTION WHERE
// label = ...). It fails when db or the label is unknown.
func (s *Server) TxnByLabel(db, label string) (doris.Transaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	d, ok := s.dbs[db]
	if !ok {
		return doris.Transaction{}, fmt.Errorf("txn by label %s: %w", label, errUnknownDatabase(db))
	}
	t := d.txns.latest(label)
	if t == nil {
		return doris.Transaction{}, fmt.Errorf("transaction with label %s does not exist", label)
	}
	return t.snapshot(), nil
}

// TxnByID returns txn id of db. It fails when db or the txn is unknown.
func (s *Server) TxnByID(db string, id int64) (doris.Transaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	d, ok := s.dbs[db]
	if !ok {
		return doris.Transaction{}, fmt.Errorf("txn %d: %w", id, errUnknownDatabase(db))
	}
	t, ok := d.txns.byID[id]
	if !ok {
		return doris.Transaction{}, fmt.Errorf("transaction with id %d does not exist", id)
	}
	return t.snapshot(), nil
}

// Txns returns every txn Doris still remembers in db, ascending by id.
func (s *Server) Txns(db string) ([]doris.Transaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	d, ok := s.dbs[db]
	if !ok {
		return nil, fmt.Errorf("txns: %w", errUnknownDatabase(db))
	}
	return snapshots(d, func(*txn) bool { return true }), nil
}

func snapshots(d *database, keep func(*txn) bool) []doris.Transaction {
	var out []doris.Transaction
	for _, t := range d.txns.byID {
		if keep(t) {
			out = append(out, t.snapshot())
		}
	}
	sortTxns(out)
	return out
}

func sortTxns(ts []doris.Transaction) {
	slices.SortFunc(ts, func(a, b doris.Transaction) int { return cmpInt(a.ID, b.ID) })
}
