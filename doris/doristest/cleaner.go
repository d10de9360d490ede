package doristest

// Behavior (docs/doris-facts.md §4 retention, §5 timeouts; FE-DTM
// removeExpiredAndTimeoutTxns, FE-TS isTimeout / isExpired):
//   - Internal group-commit loads whose group_commit_interval_ms passed are
//     committed first (group_commit.go).
//   - PREPARE txns with now − prepareTime > timeout → ABORTED
//     "timeout by txn manager".
//   - PRECOMMITTED txns with now − preCommitTime > precommit timeout
//     (stream_load_default_precommit_timeout_second at creation, 3600 s)
//     → ABORTED "timeout by txn manager".
//   - Final txns (VISIBLE, ABORTED) with now − finishTime >
//     streaming_label_keep_max_second (43200 s) are removed; then, per db,
//     final txns beyond label_num_threshold (2000; ≤0 = no cap) are removed
//     oldest-finished first. Removed txns are gone: get_load_state says
//     UNKNOWN, lookups say not found, and the label is free.
//
// Real Doris runs this every transaction_clean_interval_second (30 s), so it
// lags up to 30 s. A txn timed out lazily gets its deadline as finishTime, as
// if the cleaner had run exactly then. The emulator runs it at the start of
// every FE/BE request, MySQL SELECT and SHOW TRANSACTION, every state reader,
// admin /clock/advance and RunCleaner, so a
// test that advances a ManualClock sees the effect on its next call.

import (
	"slices"

	"github.com/doris-sink/doris-sink/doris"
)

// RunCleaner evaluates timeouts and label retention now.
func (s *Server) RunCleaner() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
}

func (s *Server) cleanLocked() {
	now := s.clock.Now()
	s.flushGroupCommitsLocked(now) // before the PREPARE timeouts below
	keep := s.feConf(ConfLabelKeepMax)
	threshold := s.feConf(ConfLabelNumThreshold)
	for _, d := range s.dbs {
		var final []*txn
		for _, t := range d.txns.byID {
			switch t.status {
			case doris.TxnPrepare:
				if now.Sub(t.prepareTime) > t.timeout {
					s.abortLocked(t, reasonTimeout)
					t.finishTime = t.prepareTime.Add(t.timeout)
				}
			case doris.TxnPrecommitted:
				if now.Sub(t.precommitTime) > t.precommitTimeout {
					s.abortLocked(t, reasonTimeout)
					t.finishTime = t.precommitTime.Add(t.precommitTimeout)
				}
			}
			if t.status.Final() {
				final = append(final, t)
			}
		}
		slices.SortFunc(final, func(a, b *txn) int {
			if c := a.finishTime.Compare(b.finishTime); c != 0 {
				return c
			}
			return cmpInt(a.id, b.id)
		})
		n := 0
		for _, t := range final {
			// TransactionState.isExpired: whole seconds, (now-finish)/1000 > keep.
			if now.Sub(t.finishTime).Milliseconds()/1000 > keep {
				d.txns.remove(t)
				n++
			}
		}
		final = final[n:]
		if threshold > 0 {
			for len(final) > int(threshold) {
				d.txns.remove(final[0])
				final = final[1:]
			}
		}
	}
}

// TimeoutPrecommitted aborts every PRECOMMITTED txn now with
// "timeout by txn manager", as if the precommit timeout had passed.
func (s *Server) TimeoutPrecommitted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.dbs {
		for _, t := range d.txns.byID {
			if t.status == doris.TxnPrecommitted {
				s.abortLocked(t, reasonTimeout)
				n++
			}
		}
	}
	return n
}

// ExpireLabels removes every final (VISIBLE or ABORTED) txn of db now, as if
// streaming_label_keep_max_second had passed; it returns how many. An empty
// db means every database.
func (s *Server) ExpireLabels(db string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, d := range s.dbs {
		if db != "" && name != db {
			continue
		}
		for _, t := range d.txns.byID {
			if t.status.Final() {
				d.txns.remove(t)
				n++
			}
		}
	}
	return n
}
