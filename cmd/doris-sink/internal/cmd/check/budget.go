package check

import (
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// defaultSessionTimeout is Kafka's default group session.timeout.ms (45 s,
// KIP-735), used when the config names none (kafka.session_timeout): the
// shortest pause a member of a group (and so a restart) must survive.
const defaultSessionTimeout = 45 * time.Second

// labelBudget is the label arithmetic of issue 12 ("Budget") for the
// configured writers: every checkpoint interval each writer slot
// (job.slots; one for a standalone job) decides one label per table and
// sub-load it touched, so a checkpoint of the job finishes up to slots ×
// tables × sub-loads labels. Doris keeps a finished label for at most
// streaming_label_keep_max_second and at most the newest
// label_num_threshold finished transactions of the database (Doris FE
// DatabaseTransactionMgr.removeUselessTxns and TransactionState.isExpired;
// docs/doris-facts.md §4). Other loads into the database share that count
// and shorten the window. Members beyond job.slots are hot standbys and
// write nothing.
type labelBudget struct {
	Interval time.Duration // delivery.checkpoint_interval
	Tables   int           // doris.table and the tables routing names up front
	Slots    int           // job.slots (writer slots; ≤1: one writer)
	SubLoads int           // doris.sub_loads (≤1: one load per table)
	// TablesOpen is true when routing names tables in the records
	// (routing.table_field/table_header/debezium_template): Tables is then
	// a lower bound.
	TablesOpen bool
	Threshold  int64         // label_num_threshold (≤0: no count limit)
	Keep       time.Duration // streaming_label_keep_max_second
}

// budgetOf is the budget of cfg's writers with Doris's threshold and keep.
func budgetOf(cfg *config.Config, threshold int64, keep time.Duration) labelBudget {
	ro := cfg.Routing
	return labelBudget{Interval: cfg.Delivery.CheckpointInterval, Tables: 1 + len(routedTables(cfg)), Slots: cfg.SlotCount(),
		SubLoads: max(cfg.Doris.SubLoads, 1), TablesOpen: ro.TableField != "" || ro.TableHeader != "" || ro.DebeziumTemplate != "",
		Threshold: threshold, Keep: keep}
}

// perHour is how many labels the job finishes per hour.
func (b labelBudget) perHour() float64 {
	return float64(b.perCheckpoint()) * float64(time.Hour) / float64(b.Interval)
}

// perCheckpoint is the number of labels the job finishes per checkpoint
// interval at most: slots × tables × sub-loads.
func (b labelBudget) perCheckpoint() int64 {
	return int64(max(b.Tables, 1) * max(b.SubLoads, 1) * max(b.Slots, 1))
}

// running is how many of the job's txns Doris counts as running at once
// (Doris FE DatabaseTransactionMgr.unprotectUpsertTransactionState counts
// every txn not in a final status, PREPARE, PRECOMMITTED and COMMITTED, in
// runningTxnNums, which checkRunningTxnExceedLimit compares with
// max_running_txn_num_per_db): per slot, table and sub-load one loading
// and one committing, as a checkpoint's commit runs while the next one
// streams (loader.Checkpoint). A heal replays at recovery, before the
// slot loads anything else, so it adds none.
func (b labelBudget) running() int64 { return 2 * b.perCheckpoint() }

// shape names the writers for messages.
func (b labelBudget) shape() string {
	tables := fmt.Sprintf("%d table(s)", max(b.Tables, 1))
	if b.TablesOpen {
		tables = fmt.Sprintf("at least %d table(s)", max(b.Tables, 1))
	}
	s := fmt.Sprintf("%d slot(s) × %s", max(b.Slots, 1), tables)
	if b.SubLoads > 1 {
		s += fmt.Sprintf(" × %d sub-load(s)", b.SubLoads)
	}
	return s
}

// window is how long a label of the job survives in Doris and which limit
// sets it: min(streaming_label_keep_max_second, label_num_threshold ÷
// labels per checkpoint × checkpoint_interval).
func (b labelBudget) window() (time.Duration, string) {
	if b.Threshold <= 0 || b.Interval <= 0 {
		return b.Keep, fmt.Sprintf("streaming_label_keep_max_second %v", b.Keep)
	}
	byCount := time.Duration(b.Threshold/b.perCheckpoint()) * b.Interval
	if byCount < b.Keep {
		return byCount, fmt.Sprintf("label_num_threshold %d ÷ (%s) × checkpoint_interval %v",
			b.Threshold, b.shape(), b.Interval)
	}
	return b.Keep, fmt.Sprintf("streaming_label_keep_max_second %v; by count it would be %v: label_num_threshold %d ÷ (%s) × %v",
		b.Keep, byCount, b.Threshold, b.shape(), b.Interval)
}

// checkLabelBudget reports how long a label survives and warns when it
// would not outlive a session timeout (a member paused or killed keeps its
// slots that long before another resolves its labels), an hour, or the
// precommit timeout (a decided checkpoint whose label is evicted before
// its restart needs `checkpoint resolve`).
func checkLabelBudget(r *Report, b labelBudget, session, precommit time.Duration, source string) {
	if session <= 0 {
		session = defaultSessionTimeout
	}
	w, why := b.window()
	w = w.Round(time.Second)
	base := fmt.Sprintf("a label of this job survives about %v in Doris (%s; %s) at %.0f labels/hour from this job "+
		"(%d per checkpoint: %s); other loads in the db shorten it", w, why, source, b.perHour(), b.perCheckpoint(), b.shape())
	switch {
	case w < session:
		r.add(Fail, "label retention", "%s: shorter than the Kafka session timeout %v (kafka.session_timeout): a restart or a "+
			"rebalance outlasts the labels it must resolve; raise delivery.checkpoint_interval or label_num_threshold", base, session)
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

// checkRunningTxns compares the txns the job runs at once with
// max_running_txn_num_per_db (Doris FE DatabaseTransactionMgr
// checkRunningTxnExceedLimit: a begin beyond it is refused).
func checkRunningTxns(r *Report, b labelBudget, limit int64) {
	need := b.running()
	what := fmt.Sprintf("the job runs up to %d txns at once (one loading and one committing per slot, table and sub-load: 2 × %s)",
		need, b.shape())
	switch {
	case limit < need:
		r.add(Fail, "running txns", "max_running_txn_num_per_db %d: %s; a begin beyond the limit is refused; lower job.slots "+
			"or doris.sub_loads, or raise the limit", limit, what)
	case limit < 5*need:
		r.add(Warn, "running txns", "max_running_txn_num_per_db %d is shared with every load of the db; %s", limit, what)
	default:
		r.add(OK, "running txns", "max_running_txn_num_per_db %d; %s", limit, what)
	}
}
