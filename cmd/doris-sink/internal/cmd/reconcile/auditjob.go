package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// Audit-link finding kinds (--audit-job).
const (
	// KindDuplicateOffset: a source (topic,) partition and offset appears
	// more than once in the audit table within the decisions' ranges.
	KindDuplicateOffset = "duplicate-offset"
	// KindBeyondEvidence: an audit row's offset is at or past the end of
	// the last decision (or on a partition no decision covers): no
	// committed checkpoint of the audit job loaded it.
	KindBeyondEvidence = "beyond-evidence"
)

// Evidence is what the audit job's checkpoint store says it loaded into
// the audit table: per topic and partition the offset range its retained
// decisions cover, and the rows those decisions loaded.
type Evidence struct {
	// Topic, Partition and Offset are the audit's metadata columns
	// (records.metadata_columns); Topic "" when the job reads one topic
	// and records none.
	Topic, Partition, Offset string
	// Ranges are topic → partition → [start, end); start -1 when the
	// oldest retained decision was the job's first (from the earliest).
	Ranges map[string]map[int32][2]int64
	// Rows is the loaded rows of those decisions into the audit table;
	// -1 when not known (a decision without counts, or the last one not
	// committed yet).
	Rows int64
	// Decisions is how many decisions were read; Why says why Rows is -1.
	Decisions int
	Why       string
}

// AuditLink is the comparison of the audit table with the evidence.
type AuditLink struct {
	// Job is the audit job's name.
	Job string `json:"job"`
	// Decisions is how many retained decisions were read.
	Decisions int `json:"decisions"`
	// Ranges are "topic/partition: [start, end)" covered.
	Ranges []string `json:"ranges"`
	// Rows is the audit rows within the ranges; EvidenceRows the rows the
	// decisions loaded (-1: not compared, Note says why).
	Rows         int64  `json:"rows"`
	EvidenceRows int64  `json:"evidence_rows"`
	Equal        bool   `json:"equal"`
	Note         string `json:"note,omitempty"`
}

// ReadEvidence reads the audit job's checkpoint store (jobstate: the file
// store in job.data_dir, or the Kafka state topic, read-only) and returns
// its evidence for the audit table audit.
func ReadEvidence(ctx context.Context, cfg *config.Config, audit Table) (*Evidence, error) {
	md := cfg.Records.MetadataColumns
	ev := &Evidence{Topic: md["topic"], Partition: md["partition"], Offset: md["offset"], Ranges: map[string]map[int32][2]int64{}, Rows: 0}
	if ev.Partition == "" || ev.Offset == "" {
		return nil, fmt.Errorf("audit job %s: records.metadata_columns has no partition and offset columns: the audit rows cannot be linked to offsets", cfg.Job.Name)
	}
	if cfg.Doris.Database+"."+cfg.Doris.Table != audit.String() {
		return nil, fmt.Errorf("audit job %s loads %s.%s, not the audit table %s", cfg.Job.Name, cfg.Doris.Database, cfg.Doris.Table, audit)
	}
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("audit job %s: %w", cfg.Job.Name, err)
	}
	if v.SlotCount >= 2 {
		return nil, fmt.Errorf("audit job %s runs %d writer slots: linking a group-mode job's decisions is not supported", cfg.Job.Name, v.SlotCount)
	}
	st := v.State
	if st == nil || st.Decided == nil {
		return nil, fmt.Errorf("audit job %s has decided no checkpoint yet", cfg.Job.Name)
	}
	decisions := append(slices.Clone(st.History), *st.Decided)
	ev.Decisions = len(decisions)
	first, _, err := kafka.ParsePosition(decisions[0].Start)
	if err != nil {
		return nil, fmt.Errorf("audit job %s: checkpoint %d: %w", cfg.Job.Name, decisions[0].ID, err)
	}
	last, ok, err := kafka.ParsePosition(st.Decided.End)
	if err != nil || !ok {
		return nil, fmt.Errorf("audit job %s: checkpoint %d has no end position (%v)", cfg.Job.Name, st.Decided.ID, err)
	}
	for _, t := range last.TopicNames() {
		ev.Ranges[t] = map[int32][2]int64{}
		for p, end := range last.Of(t) {
			// A partition the oldest retained decision does not start on
			// was read from its earliest offset (a fresh start, or a
			// partition added later): no lower bound.
			start := int64(-1)
			if s, ok := first.Of(t)[p]; ok {
				start = s
			}
			ev.Ranges[t][p] = [2]int64{start, end}
		}
	}
	if len(ev.Ranges) > 1 && ev.Topic == "" {
		return nil, fmt.Errorf("audit job %s reads %d topics and records.metadata_columns has no topic column: offsets are ambiguous", cfg.Job.Name, len(ev.Ranges))
	}
	if !st.Decided.Committed {
		ev.Rows, ev.Why = -1, fmt.Sprintf("checkpoint %d is decided but its commit is not recorded yet: run again once it is", st.Decided.ID)
		return ev, nil
	}
	for _, d := range decisions {
		n, ok := loadedRows(d, audit)
		if !ok {
			ev.Rows, ev.Why = -1, fmt.Sprintf("checkpoint %d records no row counts", d.ID)
			break
		}
		ev.Rows += n
	}
	return ev, nil
}

// loadedRows is the rows decision d loaded into table t.
func loadedRows(d checkpoint.Decision, t Table) (int64, bool) {
	if d.Empty {
		return 0, true
	}
	if len(d.Txns) > 0 {
		var n int64
		for _, tx := range d.Txns {
			if tx.Table == t.String() || tx.Table == t.Name {
				if tx.Counts == nil {
					return 0, false
				}
				n += tx.Counts.RowsLoaded
			}
		}
		return n, true
	}
	if d.Counts == nil {
		return 0, false
	}
	return d.Counts.RowsLoaded, true
}

// evidence predicates: rows within the ranges, and rows beyond them.
func (ev *Evidence) predicates() (in, beyond string) {
	var ins, belows []string
	for _, t := range slices.Sorted(maps.Keys(ev.Ranges)) {
		for _, p := range slices.Sorted(maps.Keys(ev.Ranges[t])) {
			r := ev.Ranges[t][p]
			part := quote(ev.Partition) + " = " + strconv.Itoa(int(p))
			if ev.Topic != "" {
				part = quote(ev.Topic) + " = '" + strings.ReplaceAll(t, "'", "''") + "' AND " + part
			}
			lo := ""
			if r[0] >= 0 {
				lo = " AND " + quote(ev.Offset) + " >= " + strconv.FormatInt(r[0], 10)
			}
			hi := " AND " + quote(ev.Offset) + " < " + strconv.FormatInt(r[1], 10)
			ins = append(ins, "("+part+lo+hi+")")
			belows = append(belows, "("+part+hi+")")
		}
	}
	if len(ins) == 0 {
		ins, belows = []string{"1 = 0"}, []string{"1 = 0"}
	}
	null := quote(ev.Partition) + " IS NULL OR " + quote(ev.Offset) + " IS NULL"
	return strings.Join(ins, " OR "), null + " OR NOT (" + strings.Join(belows, " OR ") + ")"
}

func (ev *Evidence) rangeTexts() []string {
	var out []string
	for _, t := range slices.Sorted(maps.Keys(ev.Ranges)) {
		for _, p := range slices.Sorted(maps.Keys(ev.Ranges[t])) {
			r := ev.Ranges[t][p]
			start := "earliest"
			if r[0] >= 0 {
				start = strconv.FormatInt(r[0], 10)
			}
			out = append(out, fmt.Sprintf("%s/%d: [%s, %d)", t, p, start, r[1]))
		}
	}
	return out
}

// linkAudit runs the evidence checks on the audit table.
func linkAudit(run *runner, b *builder, job string, ev *Evidence, rep *Report) {
	in, beyond := ev.predicates()
	ids := []string{ev.Partition, ev.Offset}
	if ev.Topic != "" {
		ids = append([]string{ev.Topic}, ids...)
	}
	keyCheck(run, rep, KindDuplicateOffset, "SELECT "+cols("", ids)+" FROM "+b.audit+" WHERE ("+in+") GROUP BY "+cols("", ids)+" HAVING COUNT(*) > 1", ids)
	keyCheck(run, rep, KindBeyondEvidence, "SELECT "+cols("", ids)+" FROM "+b.audit+" WHERE "+beyond, ids)
	l := &AuditLink{Job: job, Decisions: ev.Decisions, Ranges: ev.rangeTexts(), EvidenceRows: ev.Rows, Note: ev.Why}
	l.Rows = run.int("SELECT COUNT(*) FROM " + b.audit + " WHERE (" + in + ")")
	l.Equal = ev.Rows < 0 || l.Rows == ev.Rows
	if ev.Rows >= 0 && !l.Equal {
		l.Note = fmt.Sprintf("the audit table holds %d rows within the decisions' ranges, the decisions loaded %d (%+d): rows loaded twice, lost, or written by another writer",
			l.Rows, ev.Rows, l.Rows-ev.Rows)
	}
	rep.AuditLink = l
}
