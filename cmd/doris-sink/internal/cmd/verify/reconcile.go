package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Doris is what verify asks Doris. *doris.Client satisfies it.
type Doris interface {
	// LoadState is get_load_state (docs/doris-facts.md §6.1).
	LoadState(ctx context.Context, db, label string) (doris.TxnStatus, error)
	// TransactionByLabel is SHOW TRANSACTION WHERE label = (§6.2).
	TransactionByLabel(ctx context.Context, db, label string) (*doris.Transaction, error)
	// TransactionsByStatus is SHOW TRANSACTION WHERE status = (§6.2).
	TransactionsByStatus(ctx context.Context, db string, status doris.TxnStatus) ([]doris.Transaction, error)
	// ShowCreateTable reads the table's model.
	ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error)
	// TableRowCount is SELECT COUNT(*) of the table.
	TableRowCount(ctx context.Context, db, table string) (int64, error)
}

// Kafka is what verify asks Kafka.
type Kafka interface {
	// HighWatermarks returns the end offset of every partition of topic.
	HighWatermarks(ctx context.Context, topic string) (map[int32]int64, error)
	// CountRange reads offsets [start, end) of one partition with a
	// read_committed consumer and counts what it holds. verify calls it
	// only for checkpoints whose rows and dead letters do not cover their
	// offsets.
	CountRange(ctx context.Context, topic string, partition int32, start, end int64) (RangeCount, error)
}

// Input is what Reconcile reads. Doris and Kafka may be nil: those checks
// are then reported as unverifiable.
type Input struct {
	Job, DB, Table string
	// Entries and Torn are the ledger (ledger.ReadFile).
	Entries []ledger.Entry
	Torn    *ledger.TornTail
	// State is the checkpoint store (checkpoint.ReadFile); nil if absent.
	State *checkpoint.State
	Doris Doris
	Kafka Kafka
	// LingerAfter is the age beyond which a PREPARE/PRECOMMITTED txn of the
	// job's prefix is a gap (checkpoint interval + margin); 0 skips the
	// check.
	LingerAfter time.Duration
	// TableCount compares a Duplicate Key table's COUNT(*) with the
	// ledger's loaded rows (the job must be the table's only writer).
	TableCount bool
	// Now is the clock for txn ages; nil is time.Now.
	Now func() time.Time
	// SkipsTombstones is true when the job skips nil-value records (a
	// Debezium envelope: records.format debezium, or a registry format
	// with records.envelope debezium; kafka.SkipsTombstones) instead of
	// loading or dead-lettering them.
	SkipsTombstones bool
	// Incomplete, when set, says why the entries do not cover every
	// checkpoint of the job (a slot's pre-evidence ledger is elsewhere,
	// expired evidence): the table count is then not compared.
	Incomplete string
	// Bounded is true when the evidence was read from an offset (--since):
	// the first checkpoint read need not start where the job began.
	Bounded bool
	// Baseline are the rows loaded per table ("db.table") by checkpoints
	// whose evidence expired (the writers' cumulative totals): the table
	// count adds them to what the entries account for.
	Baseline map[string]int64
	// Reread reads the evidence again (the settle rule of the table count
	// for a running job); nil: no second read.
	Reread func(ctx context.Context) ([]*record, error)
	// Slots are the writer slots of a group-mode job (job.slots ≥ 2),
	// each with its own ledger and state; Entries, Torn and State are then
	// unused. Every slot's checkpoints are reconciled on their own (ids,
	// ranges and contiguity are per slot), the lingering txns and the
	// table count once for the job.
	Slots []SlotInput
}

// SlotInput is one writer slot's evidence.
type SlotInput struct {
	// Scope is the slot's writer scope (its labels' scope field).
	Scope   string
	Entries []ledger.Entry
	Torn    *ledger.TornTail
	State   *checkpoint.State
}

// Reconcile checks the ledger against itself, the store, Doris and Kafka
// (every writer slot's, in.Slots). It returns a report; lookup failures
// become findings, never errors.
func Reconcile(ctx context.Context, in Input) *Report {
	rep := &Report{Job: in.Job, Table: in.DB + "." + in.Table, Findings: []Finding{}, Checkpoints: []Checkpoint{}}
	slots := in.Slots
	if len(slots) == 0 {
		slots = []SlotInput{{Entries: in.Entries, Torn: in.Torn, State: in.State}}
	}
	var all []*record
	txnStates := map[*record]doris.TxnStatus{}
	for _, s := range slots {
		all = append(all, reconcileSlot(ctx, in, s, rep, txnStates)...)
	}
	checkLingering(ctx, in, rep)
	checkTableCount(ctx, in, all, txnStates, rep)
	return rep
}

// reconcileSlot reconciles one writer slot's ledger and state into rep
// and returns its decided checkpoints (their Doris states in txnStates).
func reconcileSlot(ctx context.Context, in Input, slot SlotInput, rep *Report, txnStates map[*record]doris.TxnStatus) []*record {
	where := ""
	if slot.Scope != "" {
		where = "writer slot " + slot.Scope + ": "
	}
	if slot.Torn != nil {
		rep.add(Finding{Severity: SeverityWarning, Kind: KindLedger, Scope: slot.Scope,
			Message: fmt.Sprintf("%sledger ends with a torn line (%s): a crash during an append; it is repaired at the next start", where, slot.Torn)})
	}
	recs := fold(slot.Entries)
	rows := make([]Checkpoint, len(recs))
	status := make([]Severity, len(recs))
	note := func(i int, f Finding) {
		f.Checkpoint, f.Label, f.Scope = recs[i].id, recs[i].label, slot.Scope
		rep.add(f)
		if rank(f.Severity) > rank(status[i]) {
			status[i] = f.Severity
		}
	}
	positions := make([]parsedRange, len(recs))
	for i, r := range recs {
		rows[i] = Checkpoint{ID: r.id, Scope: slot.Scope, Label: r.label, TxnID: r.txnID, Ledger: r.last, RowsTotal: -1, RowsLoaded: -1}
		if r.counts {
			rows[i].RowsTotal, rows[i].RowsLoaded = r.rows.total, r.rows.loaded
		}
		if r.loaded && r.counts {
			rep.RowsLoaded += r.rows.loaded
		}
		pr, findings := parseRange(r)
		positions[i] = pr
		for _, f := range findings {
			note(i, f)
		}
		rows[i].Offsets = pr.span()
		rep.Offsets += rows[i].Offsets
		if rep.Topic == "" {
			rep.Topic = pr.topic
		}
		acc, fs := checkRows(ctx, in, r, pr, rows[i].Offsets)
		rows[i].Accounted = acc
		for _, f := range fs {
			note(i, f)
		}
	}
	for i := 1; i < len(recs); i++ {
		for _, f := range contiguity(positions[i-1], positions[i]) {
			note(i, f)
		}
	}
	topic := rep.Topic // the slot's first range's topic, as rep.Topic is the first slot's
	for _, p := range positions {
		if p.topic != "" {
			topic = p.topic
			break
		}
	}
	checkKafka(ctx, in.Kafka, topic, positions, note)
	states := make([]doris.TxnStatus, len(recs))
	for i, r := range recs {
		for _, tx := range r.txnRecords() {
			tin := in
			if tx.db != "" {
				tin.DB = tx.db
			}
			st := checkDoris(ctx, tin, tx, func(f Finding) {
				if len(r.txns) > 0 {
					f.Message = "table " + tx.db + "." + tx.table + ": " + f.Message
				}
				note(i, f)
			})
			txnStates[tx] = st
			if states[i] == "" || st != doris.TxnVisible {
				states[i] = st // a checkpoint of several txns shows its first not VISIBLE
			}
		}
		rows[i].Doris = string(states[i])
	}
	checkStore(slot.State, slot.Scope, recs, rep)
	for i := range rows {
		rows[i].Status = "OK"
		if status[i] != "" {
			rows[i].Status = string(status[i])
		}
	}
	rep.Checkpoints = append(rep.Checkpoints, rows...)
	return recs
}

func rank(s Severity) int {
	switch s {
	case SeverityWarning:
		return 1
	case SeverityError:
		return 2
	case SeverityGap:
		return 3
	}
	return 0
}

// parsedRange is a checkpoint's [start, end) per topic and partition.
type parsedRange struct {
	ok bool
	// topic names the topics ("," joined).
	topic  string
	ranges map[string]topicRange
}

// topicRange is one topic's [start, end) per partition.
type topicRange struct{ start, end map[int32]int64 }

// topics returns the topics of p, sorted.
func (p parsedRange) topics() []string { return slices.Sorted(maps.Keys(p.ranges)) }

// where names partition part of topic in a message: "partition 3", or
// "topic t partition 3" when the job reads several topics.
func (p parsedRange) where(topic string, part int32) string {
	if len(p.ranges) > 1 {
		return fmt.Sprintf("topic %s partition %d", topic, part)
	}
	return fmt.Sprintf("partition %d", part)
}

// span is the number of offsets covered (a partition or topic missing
// from start starts at 0, Kafka's earliest on a topic never truncated).
func (p parsedRange) span() int64 {
	var n int64
	for _, r := range p.ranges {
		for part, e := range r.end {
			if s := r.start[part]; e > s {
				n += e - s
			}
		}
	}
	return n
}

// parseRange decodes a record's positions and checks end ≥ start.
func parseRange(r *record) (parsedRange, []Finding) {
	var fs []Finding
	bad := func(format string, a ...any) {
		fs = append(fs, Finding{Severity: SeverityError, Kind: KindRange, Message: fmt.Sprintf(format, a...)})
	}
	if !notNull(r.end) {
		bad("the ledger records no end position")
		return parsedRange{}, fs
	}
	start, hasStart, err := kafka.ParsePosition(r.start)
	if err != nil {
		bad("start: %v", err)
		return parsedRange{}, fs
	}
	end, _, err := kafka.ParsePosition(r.end)
	if err != nil {
		bad("end: %v", err)
		return parsedRange{}, fs
	}
	if hasStart && start.Topic != "" && end.Topic != "" && start.Topic != end.Topic {
		bad("start is on topic %q, end on %q", start.Topic, end.Topic)
	}
	pr := parsedRange{ok: true, topic: strings.Join(end.TopicNames(), ","), ranges: map[string]topicRange{}}
	for _, t := range end.TopicNames() {
		s := start.Of(t) // a topic new in this checkpoint (kafka.topic_regex) starts at its earliest
		if s == nil {
			s = map[int32]int64{}
		}
		pr.ranges[t] = topicRange{start: s, end: end.Of(t)}
	}
	for _, t := range start.TopicNames() {
		if _, ok := pr.ranges[t]; !ok && hasStart && (start.Topic == "" || end.Topic == "") {
			bad("topic %s is in the start position but not in the end", t)
		}
	}
	for _, t := range pr.topics() {
		r := pr.ranges[t]
		for _, part := range sortedParts(r.start) {
			e, ok := r.end[part]
			p := part
			switch {
			case !ok:
				fs = append(fs, Finding{Severity: SeverityError, Kind: KindRange, Partition: &p,
					Message: fmt.Sprintf("%s is in the start position but not in the end", pr.where(t, part))})
			case e < r.start[part]:
				fs = append(fs, Finding{Severity: SeverityError, Kind: KindRange, Partition: &p,
					Message: fmt.Sprintf("%s ends at %d before its start %d", pr.where(t, part), e, r.start[part])})
			}
		}
	}
	return pr, fs
}

// contiguity checks that cur starts exactly where prev ended, per
// partition (docs/design.md §2 invariant 5: positions move only with decisions).
func contiguity(prev, cur parsedRange) []Finding {
	if !prev.ok || !cur.ok {
		return nil
	}
	var fs []Finding
	if len(prev.ranges) == 1 && len(cur.ranges) == 1 && prev.topic != cur.topic {
		return append(fs, Finding{Severity: SeverityError, Kind: KindRange,
			Message: fmt.Sprintf("topic changed from %q to %q between checkpoints", prev.topic, cur.topic)})
	}
	for _, t := range prev.topics() {
		pend, cstart := prev.ranges[t].end, cur.ranges[t].start
		for _, part := range sortedParts(pend) {
			p, pe := part, pend[part]
			cs, ok := cstart[part]
			w := prev.where(t, part)
			switch {
			case !ok:
				fs = append(fs, Finding{Severity: SeverityGap, Kind: KindGap, Partition: &p,
					Message: fmt.Sprintf("%s: the previous checkpoint ended at %d but this one does not resume it", w, pe)})
			case cs > pe:
				fs = append(fs, Finding{Severity: SeverityGap, Kind: KindGap, Partition: &p,
					Message: fmt.Sprintf("%s: offsets [%d, %d) were never loaded (previous end %d, this start %d)", w, pe, cs, pe, cs)})
			case cs < pe:
				fs = append(fs, Finding{Severity: SeverityGap, Kind: KindOverlap, Partition: &p,
					Message: fmt.Sprintf("%s: offsets [%d, %d) were loaded twice (previous end %d, this start %d)", w, cs, pe, pe, cs)})
			}
		}
	}
	return fs
}

// checkKafka checks every end against the partition's high watermark,
// per topic.
func checkKafka(ctx context.Context, k Kafka, topic string, ps []parsedRange, note func(int, Finding)) {
	if len(ps) == 0 || topic == "" {
		return
	}
	if k == nil {
		note(len(ps)-1, Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "Kafka not checked: no brokers"})
		return
	}
	hws := map[string]map[int32]int64{}
	for i, p := range ps {
		for _, t := range p.topics() {
			hw, seen := hws[t]
			if !seen {
				var err error
				if hw, err = k.HighWatermarks(ctx, t); err != nil {
					note(len(ps)-1, Finding{Severity: SeverityWarning, Kind: KindUnverifiable,
						Message: fmt.Sprintf("Kafka high watermarks of %s: %v", t, err)})
					return
				}
				hws[t] = hw
			}
			end := p.ranges[t].end
			for _, part := range sortedParts(end) {
				h, ok := hw[part]
				pp := part
				switch {
				case !ok:
					note(i, Finding{Severity: SeverityError, Kind: KindHighWatermark, Partition: &pp,
						Message: fmt.Sprintf("partition %d of %s does not exist in Kafka", part, t)})
				case end[part] > h:
					note(i, Finding{Severity: SeverityError, Kind: KindHighWatermark, Partition: &pp,
						Message: fmt.Sprintf("%s ends at %d beyond the high watermark %d (topic recreated or truncated?)", p.where(t, part), end[part], h)})
				}
			}
		}
	}
}

// checkDoris looks up a decided label (docs/design.md §2 recovery table) and
// returns the state Doris reported ("" when not looked up).
func checkDoris(ctx context.Context, in Input, r *record, note func(Finding)) doris.TxnStatus {
	if r.txnID == 0 && (!r.counts || r.rows.total == 0) {
		return "" // an empty checkpoint (no rows, maybe dead letters) has no transaction
	}
	if in.Doris == nil {
		note(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "Doris not checked"})
		return ""
	}
	st, err := in.Doris.LoadState(ctx, in.DB, r.label)
	if err != nil {
		note(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: fmt.Sprintf("get_load_state: %v", err)})
		return ""
	}
	switch st {
	case doris.TxnVisible, doris.TxnCommitted:
		if !r.loaded {
			note(Finding{Severity: SeverityWarning, Kind: KindLedger,
				Message: fmt.Sprintf("Doris reports %s but the evidence has no committed entry yet: a running job records it with its next save; "+
					"a stopped one crashed between the commit and that save, and its next start records it", st)})
		}
		checkTxnID(ctx, in, r, note)
	case doris.TxnPrecommitted:
		if r.loaded {
			note(Finding{Severity: SeverityError, Kind: KindState, Message: "the ledger says committed but Doris holds the txn PRECOMMITTED"})
		} else {
			note(Finding{Severity: SeverityWarning, Kind: KindState, Message: "decided and still PRECOMMITTED: the running job (or the next start) commits it"})
		}
	case doris.TxnAborted:
		note(Finding{Severity: SeverityGap, Kind: KindState,
			Message: "decided but ABORTED in Doris: its rows are not loaded (the next start heals it by replaying the range)"})
	case doris.TxnUnknown:
		if r.loaded {
			note(Finding{Severity: SeverityWarning, Kind: KindUnverifiable,
				Message: "Doris no longer knows the label (stream-load labels are kept 12 h / 2000 per db, docs/doris-facts.md §4)"})
		} else {
			note(Finding{Severity: SeverityError, Kind: KindState,
				Message: "decided, never recorded committed, and Doris no longer knows the label: run `doris-sink checkpoint resolve`"})
		}
	default:
		note(Finding{Severity: SeverityError, Kind: KindState, Message: fmt.Sprintf("a decided label is %s in Doris", st)})
	}
	return st
}

// checkTxnID compares the ledger's txn id with SHOW TRANSACTION's; a
// difference means another writer used the label.
func checkTxnID(ctx context.Context, in Input, r *record, note func(Finding)) {
	if r.txnID == 0 {
		return
	}
	t, err := in.Doris.TransactionByLabel(ctx, in.DB, r.label)
	if err != nil {
		note(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: fmt.Sprintf("SHOW TRANSACTION: %v", err)})
		return
	}
	if t.ID != r.txnID {
		note(Finding{Severity: SeverityError, Kind: KindTxn,
			Message: fmt.Sprintf("the ledger names txn %d but Doris holds the label under txn %d (%s)", r.txnID, t.ID, t.Status)})
	}
}

// checkStore compares the store's last decision with the ledger.
func checkStore(st *checkpoint.State, scope string, recs []*record, rep *Report) {
	if st == nil || st.Decided == nil {
		return
	}
	d := st.Decided
	if !slices.ContainsFunc(recs, func(r *record) bool { return r.id == d.ID }) {
		rep.add(Finding{Severity: SeverityWarning, Kind: KindLedger, Checkpoint: d.ID, Label: d.Label, Scope: scope,
			Message: "the store's last decided checkpoint is missing from the ledger (a failed ledger append)"})
	}
}

func sortedParts(m map[int32]int64) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
