package label

import (
	"sort"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/doris"
	lbl "github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Where a label of `label list` was found (ListItem.FoundIn).
const (
	FoundStore  = "store"  // the checkpoint store (decided, history, announced)
	FoundLedger = "ledger" // an evidence ledger entry names it
	FoundDoris  = "doris"  // SHOW TRANSACTION WHERE label LIKE '<job>:%' lists it
)

// dorisPattern returns the label prefix to ask Doris about for job prefix
// jobPrefix ("<job>:") narrowed by --prefix, and false when --prefix
// excludes every label of the job. The result consists of label characters
// only, which mean themselves in Doris's LIKE (docs/doris-facts.md §6.2: % → .*,
// matched as a regular expression).
func dorisPattern(jobPrefix, prefix string) (string, bool) {
	switch {
	case strings.HasPrefix(jobPrefix, prefix):
		return jobPrefix, true
	case strings.HasPrefix(prefix, jobPrefix):
		if lbl.Validate(prefix) != nil {
			return "", false // no label has a character outside the label alphabet
		}
		return prefix, true
	}
	return "", false
}

// merge joins the store's labels (already filtered by prefix), the labels
// the ledger names and the txns Doris listed for the job's prefix into the
// rows of `label list`, newest checkpoint first. Each row says where its
// label was found; a label Doris holds that neither the store nor the
// ledger knows is UnknownToJob. Ledger-only labels (neither in the store
// nor in Doris) are not listed. txns is newest first (SHOW TRANSACTION's
// order), so a label's first txn is its latest, the one get_load_state
// reports (docs/doris-facts.md §6.1). txns nil means Doris was not listed.
func merge(store []jobstate.Label, entries []ledger.Entry, txns []doris.Transaction, jobPrefix, prefix string) []ListItem {
	inLedger := map[string]*ledger.Entry{}
	for i := range entries {
		inLedger[entries[i].Label] = &entries[i] // the last entry wins
	}
	latest := map[string]*doris.Transaction{}
	var order []string
	for i := range txns {
		t := &txns[i]
		if !strings.HasPrefix(t.Label, jobPrefix) || !strings.HasPrefix(t.Label, prefix) {
			continue // LIKE on SQL engines also matches _ as any character
		}
		if _, ok := latest[t.Label]; !ok {
			latest[t.Label] = t
			order = append(order, t.Label)
		}
	}
	items := make([]ListItem, 0, len(store)+len(order))
	inStore := map[string]bool{}
	for _, l := range store {
		it := ListItem{Label: l, FoundIn: []string{FoundStore}}
		inStore[l.Label] = true
		if inLedger[l.Label] != nil {
			it.FoundIn = append(it.FoundIn, FoundLedger)
		}
		if t := latest[l.Label]; t != nil {
			it.FoundIn = append(it.FoundIn, FoundDoris)
			it.DorisState, it.DorisTxnID = string(t.Status), t.ID
		}
		items = append(items, it)
	}
	for _, name := range order {
		if inStore[name] {
			continue
		}
		t := latest[name]
		it := ListItem{Label: jobstate.Label{Label: name, At: t.PrepareTime}, FoundIn: []string{FoundDoris},
			DorisState: string(t.Status), DorisTxnID: t.ID}
		if p, err := lbl.Parse(name); err == nil {
			it.Checkpoint = p.Checkpoint
		}
		if e := inLedger[name]; e != nil {
			it.FoundIn = []string{FoundLedger, FoundDoris}
			it.Checkpoint, it.TxnID = e.Checkpoint, e.TxnID
		} else {
			it.UnknownToJob = true
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Checkpoint > items[j].Checkpoint })
	return items
}

// fencingRisk reports whether an UnknownToJob row can only come from
// another writer: its txn is not ABORTED. An ABORTED one loaded nothing and
// may also be an announced label the job found ABORTED at recovery and
// dropped without a ledger entry.
func (it ListItem) fencingRisk() bool {
	return it.UnknownToJob && it.DorisState != string(doris.TxnAborted)
}
