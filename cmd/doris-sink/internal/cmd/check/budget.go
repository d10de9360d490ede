package check

import (
	"fmt"
	"time"
)

// Writers of one job today: `run` loads one table (doris.table) as one
// process (no group mode yet). The budget below is written for more.
const (
	budgetTables  = 1
	budgetMembers = 1
)

// sessionTimeout is Kafka's default group session.timeout.ms (45 s, KIP-735):
// the shortest pause a member of a group (and so a restart) must survive.
const sessionTimeout = 45 * time.Second

// labelBudget is the label-eviction arithmetic of issue 12 ("Budget"):
// every checkpoint interval each member writes one label per table, and
// Doris keeps a finished label for at most streaming_label_keep_max_second
// and at most the newest label_num_threshold finished transactions of the
// database (Doris FE DatabaseTransactionMgr.removeUselessTxns and
// TransactionState.isExpired; docs/doris-facts.md §4). Other loads into
// the database share that count and shorten the window.
//
// With sub-loads (doris.sub_loads K) each table writes up to K labels per
// checkpoint, one per touched sub-load: the writers are tables × K ×
// members.
type labelBudget struct {
	Interval        time.Duration // delivery.checkpoint_interval
	Tables, Members int
	SubLoads        int           // doris.sub_loads (≤1: one load per table)
	Threshold       int64         // label_num_threshold (≤0: no count limit)
	Keep            time.Duration // streaming_label_keep_max_second
}

// perHour is how many labels the job finishes per hour.
func (b labelBudget) perHour() float64 {
	return float64(b.writers()) * float64(time.Hour) / float64(b.Interval)
}

// writers is the number of labels the job finishes per checkpoint at most:
// tables × sub-loads × members.
func (b labelBudget) writers() int64 {
	return int64(b.Tables * max(b.SubLoads, 1) * b.Members)
}

// shape names the writers for messages.
func (b labelBudget) shape() string {
	if b.SubLoads > 1 {
		return fmt.Sprintf("%d table(s) × %d sub-load(s) × %d member(s)", b.Tables, b.SubLoads, b.Members)
	}
	return fmt.Sprintf("%d table(s) × %d member(s)", b.Tables, b.Members)
}

// window is how long a label of the job survives in Doris and which limit
// sets it.
func (b labelBudget) window() (time.Duration, string) {
	if b.Threshold <= 0 || b.Interval <= 0 {
		return b.Keep, fmt.Sprintf("streaming_label_keep_max_second %v", b.Keep)
	}
	byCount := time.Duration(b.Threshold/b.writers()) * b.Interval
	if byCount < b.Keep {
		return byCount, fmt.Sprintf("label_num_threshold %d ÷ (%s) × checkpoint_interval %v",
			b.Threshold, b.shape(), b.Interval)
	}
	return b.Keep, fmt.Sprintf("streaming_label_keep_max_second %v; by count it would be %v: label_num_threshold %d ÷ (%s) × %v",
		b.Keep, byCount, b.Threshold, b.shape(), b.Interval)
}

// checkLabelBudget reports how long a label survives and warns when it
// would not outlive a session timeout, an hour, or the precommit timeout
// (a decided checkpoint whose label is evicted before its restart needs
// `checkpoint resolve`).
func checkLabelBudget(r *Report, b labelBudget, precommit time.Duration, source string) {
	w, why := b.window()
	w = w.Round(time.Second)
	base := fmt.Sprintf("a label of this job survives about %v in Doris (%s; %s) at %.0f labels/hour from this job; "+
		"other loads in the db shorten it", w, why, source, b.perHour())
	switch {
	case w < sessionTimeout:
		r.add(Fail, "label retention", "%s: shorter than a Kafka session timeout (%v): a restart or a rebalance outlasts the "+
			"labels it must resolve; raise delivery.checkpoint_interval or label_num_threshold", base, sessionTimeout)
	case w < time.Hour:
		r.add(Warn, "label retention", "%s: a job stopped longer with a decided, uncommitted checkpoint needs `checkpoint resolve`; "+
			"raise delivery.checkpoint_interval or label_num_threshold", base)
	case w < precommit:
		r.add(Warn, "label retention", "%s: shorter than the precommit timeout %v: a decided checkpoint's label can be forgotten "+
			"before Doris aborts its txn, so a restart after %v needs `checkpoint resolve`", base, precommit, w)
	default:
		r.add(OK, "label retention", "%s; restart a stopped job within that window", base)
	}
}
