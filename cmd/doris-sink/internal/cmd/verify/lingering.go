package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	lbl "github.com/doris-sink/doris-sink/label"
)

// DefaultLingerMargin is added to delivery.checkpoint_interval to decide
// that a running txn of the job lingers (verify --linger-margin).
const DefaultLingerMargin = 2 * time.Minute

// checkLingering lists the db's PREPARE and PRECOMMITTED txns (SHOW
// TRANSACTION WHERE status = …, docs/doris-facts.md §6.2) and reports as a gap each
// one whose label has the job's prefix "<job>:" and which began longer ago
// than in.LingerAfter. A healthy job precommits within one checkpoint
// interval and commits or aborts right after; a txn older than that is left
// behind (a crash, a failed abort): it holds a running-txn slot
// (max_running_txn_num_per_db) and, PRECOMMITTED, is aborted by Doris after
// stream_load_default_precommit_timeout_second (docs/doris-facts.md §5).
func checkLingering(ctx context.Context, in Input, rep *Report) {
	if in.Doris == nil || in.LingerAfter <= 0 {
		return
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	prefix := in.Job + ":"
	for _, st := range []doris.TxnStatus{doris.TxnPrepare, doris.TxnPrecommitted} {
		txns, err := in.Doris.TransactionsByStatus(ctx, in.DB, st)
		if err != nil {
			rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable,
				Message: fmt.Sprintf("lingering %s transactions not checked: %v", st, err)})
			continue
		}
		for _, t := range lingering(txns, prefix, now(), in.LingerAfter) {
			f := Finding{Severity: SeverityGap, Kind: KindLingering, Label: t.Label,
				Message: lingerMessage(t, now(), in.LingerAfter)}
			if p, err := lbl.Parse(t.Label); err == nil {
				f.Checkpoint = p.Checkpoint
			}
			rep.add(f)
		}
	}
}

// lingering returns the running txns of txns whose label starts with
// prefix and whose prepare time is more than after before now. A txn
// without a prepare time is not judged.
func lingering(txns []doris.Transaction, prefix string, now time.Time, after time.Duration) []doris.Transaction {
	var out []doris.Transaction
	for _, t := range txns {
		if !strings.HasPrefix(t.Label, prefix) || t.PrepareTime.IsZero() {
			continue
		}
		if (t.Status == doris.TxnPrepare || t.Status == doris.TxnPrecommitted) && now.Sub(t.PrepareTime) > after {
			out = append(out, t)
		}
	}
	return out
}

func lingerMessage(t doris.Transaction, now time.Time, after time.Duration) string {
	age := now.Sub(t.PrepareTime).Truncate(time.Second)
	msg := fmt.Sprintf("txn %d of label %s is still %s %v after it began (limit: checkpoint interval + margin = %v)",
		t.ID, t.Label, t.Status, age, after)
	if t.Status == doris.TxnPrecommitted {
		msg += "; a decided one is committed by the next start of the job, an undecided one aborted" +
			" (or `doris-sink txn commit|abort`); Doris aborts it after stream_load_default_precommit_timeout_second"
	} else {
		msg += "; it holds a running-txn slot until the job's next start aborts it (or `doris-sink txn abort`)"
	}
	return msg
}
