package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Evidence sources (EvidenceSource.Source).
const (
	// SourceEvidenceTopic: the job's evidence topic in Kafka
	// (coordlog.EvidenceTopic), written in the decisions' transactions.
	SourceEvidenceTopic = "evidence-topic"
	// SourceLocalLedger: a local ledger in job.data_dir, for checkpoints
	// decided before the job's writers wrote the evidence topic.
	SourceLocalLedger = "local-ledger"
)

// EvidenceSource says where verify read one writer slot's checkpoints
// From through To (ids) from.
type EvidenceSource struct {
	// Scope is the writer slot ("" for a one-slot job).
	Scope string `json:"scope,omitempty"`
	// Source is SourceEvidenceTopic or SourceLocalLedger; Where the topic
	// or the ledger's directory.
	Source string `json:"source"`
	Where  string `json:"where"`
	// From and To are the first and last checkpoint id read there (0 when
	// none).
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// String renders "writer slot 1: checkpoints 4-9 from the evidence topic X".
func (s EvidenceSource) String() string {
	who := "job"
	if s.Scope != "" {
		who = "writer slot " + s.Scope
	}
	what := "the evidence topic"
	if s.Source == SourceLocalLedger {
		what = "the local ledger in"
	}
	if s.From == 0 && s.To == 0 {
		return fmt.Sprintf("%s: no checkpoint in %s %s", who, what, s.Where)
	}
	return fmt.Sprintf("%s: checkpoints %d-%d from %s %s", who, s.From, s.To, what, s.Where)
}

// evidenceInputs is what verify read for a job with job.coordinator
// kafka: every writer slot's entries, merged from the evidence topic and,
// for checkpoints decided before the job wrote evidence, the local
// ledgers found here.
type evidenceInputs struct {
	slots   []SlotInput
	sources []EvidenceSource
	// missing are the slots whose pre-evidence checkpoints have no local
	// ledger here.
	missing []string
	// incomplete says why the entries do not cover every checkpoint ("":
	// they do), so the table count is not compared.
	incomplete string
	// retention, when set, says which evidence records expired: a
	// warning, never a gap (contiguity is proven over what is left).
	retention string
	// baseline are the rows loaded per table ("db.table") by the
	// checkpoints whose records expired: the sum over the writer slots of
	// the cumulative totals before each one's first retained record (nil
	// when nothing expired).
	baseline map[string]int64
	log      *coordlog.EvidenceLog
}

// readEvidenceInputs reads the evidence topic of cfg's job (from offset
// from) and merges it, slot by slot, with the local ledgers of the
// checkpoints before each slot's first evidence record. A job without an
// evidence topic reads its local ledgers only.
func readEvidenceInputs(ctx context.Context, cfg *config.Config, v *jobstate.View, from int64) (*evidenceInputs, error) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	el, err := coordlog.ReadEvidence(ctx, cfg.Job.Name, opts, coordlog.EvidenceReadOptions{From: from})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("verify job %s: %w", cfg.Job.Name, err)
	}
	out := &evidenceInputs{log: el}
	count := max(v.SlotCount, 1)
	expired := el != nil && el.LogStart > 0 && el.LogStart >= from
	switch {
	case expired:
		out.retention = fmt.Sprintf("the evidence topic %s starts at offset %d: records 0-%d expired (the topic's retention.ms / "+
			"retention.bytes); contiguity is proven over offsets %d-%d, and the table count starts from each writer slot's "+
			"cumulative totals in its first record left", el.Topic, el.LogStart, el.LogStart-1, el.LogStart, el.End)
		if err := out.retentionBaseline(el, count, true); err != "" {
			out.incomplete = err
		}
	case el != nil && el.Start > 0:
		out.incomplete = fmt.Sprintf("the evidence topic %s is read from offset %d", el.Topic, el.Start)
	case el != nil:
		// Nothing expired: the current slots' entries are folded whole, and
		// the rows of the slots a `checkpoint reslot` removed come from
		// their totals (their entries are not folded).
		if err := out.retentionBaseline(el, count, false); err != "" {
			out.incomplete = err
		}
	}
	for j := range count {
		scope := coordlog.SlotScope(j)
		in := SlotInput{Scope: scope}
		if count < 2 {
			in.Scope = ""
		}
		if s := v.SlotByNumber(j); s != nil {
			in.State = s.State
		} else if count < 2 {
			in.State = v.State
		}
		var recs []coordlog.EvidenceRecord
		if el != nil {
			recs = el.RecordsOf(scope)
		}
		var evEntries []ledger.Entry
		for _, r := range recs {
			evEntries = append(evEntries, r.Entries...)
		}
		lo, hi := idRange(evEntries, 0)
		needLocal := false
		switch {
		case len(recs) == 0:
			needLocal = in.State != nil && in.State.Decided != nil
		case el.Start == 0:
			needLocal = recs[0].Previous > 0 && (recs[0].Previous > 1 || !hasID(evEntries, recs[0].Previous))
		}
		if el != nil && len(recs) > 0 {
			out.sources = append(out.sources, EvidenceSource{Scope: in.Scope, Source: SourceEvidenceTopic, Where: el.Topic, From: lo, To: hi})
		}
		if needLocal {
			dir := jobstate.SlotDataDir(cfg.Job.DataDir, j, count)
			local, torn, err := ledger.ReadFile(dir)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				out.missing = append(out.missing, scope)
				if out.incomplete == "" {
					out.incomplete = fmt.Sprintf("writer slot %s decided checkpoints before it wrote the evidence topic and its local "+
						"ledger is not in %s (run verify where every member's job.data_dir is)", scope, dir)
				}
			case err != nil:
				return nil, fmt.Errorf("verify job %s: writer slot %s: %w", cfg.Job.Name, scope, err)
			default:
				var keep []ledger.Entry
				for _, e := range local {
					if lo == 0 || (e.Checkpoint != 0 && e.Checkpoint < lo) {
						keep = append(keep, e)
					}
				}
				llo, lhi := idRange(keep, 0)
				out.sources = append(out.sources, EvidenceSource{Scope: in.Scope, Source: SourceLocalLedger, Where: dir, From: llo, To: lhi})
				evEntries = append(keep, evEntries...)
				in.Torn = torn
			}
		}
		in.Entries = evEntries
		out.slots = append(out.slots, in)
	}
	return out, nil
}

// retentionBaseline sets out.baseline from el: for a scope the job no
// longer has (a `checkpoint reslot` removed it), whose entries verify does
// not fold, the totals after its last record; and, when expired (el's
// first records expired), per current writer slot the totals its first
// retained record carries (those before its entries: the retained entries
// count the rest). It returns why the baseline cannot be trusted ("" when
// it can): a slot whose record has no totals (written by a doris-sink
// before them) or whose totals start after checkpoint 1 (it decided
// checkpoints before it kept totals).
func (out *evidenceInputs) retentionBaseline(el *coordlog.EvidenceLog, count int, expired bool) string {
	out.baseline = map[string]int64{}
	current := map[string]bool{}
	for j := range count {
		current[coordlog.SlotScope(j)] = true
	}
	for _, scope := range el.Scopes() {
		if current[scope] && !expired {
			continue
		}
		recs := el.RecordsOf(scope)
		r := recs[0]
		if !current[scope] {
			r = recs[len(recs)-1]
		}
		if !current[scope] {
			// A removed slot's committed rows are counted only by its totals.
			if r.Totals == nil || r.Totals.Since > 1 {
				return fmt.Sprintf("writer slot %s, removed by `checkpoint reslot`, carries no cumulative totals from checkpoint 1 "+
					"in its last record in %s (offset %d: a doris-sink before them wrote it), so its committed rows cannot be counted",
					scope, el.Topic, r.Offset)
			}
		} else if r.Totals == nil {
			return fmt.Sprintf("writer slot %s's first record left in %s (offset %d) carries no cumulative totals (a doris-sink "+
				"before them wrote it) and the records before it expired", scope, el.Topic, r.Offset)
		} else if r.Totals.Since > 1 {
			return fmt.Sprintf("writer slot %s's cumulative totals start at checkpoint %d (it decided earlier checkpoints before "+
				"it kept totals) and the records before offset %d of %s expired", scope, r.Totals.Since, el.LogStart, el.Topic)
		}
		t := r.Totals.Clone()
		if !current[scope] {
			t.Add(r.Entries)
		}
		for k, v := range t.Tables {
			out.baseline[k] += v.RowsLoaded
		}
	}
	return ""
}

// idRange returns the lowest and highest checkpoint id (≠ 0) of entries
// above floor.
func idRange(entries []ledger.Entry, floor uint64) (lo, hi uint64) {
	for _, e := range entries {
		if e.Checkpoint <= floor {
			continue
		}
		if lo == 0 || e.Checkpoint < lo {
			lo = e.Checkpoint
		}
		hi = max(hi, e.Checkpoint)
	}
	return lo, hi
}

func hasID(entries []ledger.Entry, id uint64) bool {
	for _, e := range entries {
		if e.Checkpoint == id {
			return true
		}
	}
	return false
}

// topicIDer is the Kafka of verify that can look a topic's ID up.
type topicIDer interface {
	TopicID(ctx context.Context, topic string) (string, error)
}

// checkTopicIDs compares every source topic ID the evidence recorded (the
// latest record naming the topic) with the topic's current ID: another ID
// means the topic was recreated and the evidence's offsets are of the
// old one.
func checkTopicIDs(ctx context.Context, k Kafka, el *coordlog.EvidenceLog, rep *Report) {
	ti, ok := k.(topicIDer)
	if !ok || k == nil {
		return
	}
	recorded := map[string]string{}
	for _, r := range el.Records {
		for t, id := range r.TopicIDs {
			recorded[t] = id
		}
	}
	for _, t := range sortedKeys(recorded) {
		cur, err := ti.TopicID(ctx, t)
		if err != nil {
			rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: fmt.Sprintf("topic ID of %s: %v", t, err)})
			continue
		}
		if cur != recorded[t] {
			rep.add(Finding{Severity: SeverityError, Kind: KindTopicRecreated, Message: fmt.Sprintf(
				"source topic %s has topic ID %s, the evidence recorded %s: it was deleted and created again, so the evidence's "+
					"offsets are of the old topic (the job refuses to start; `doris-sink checkpoint rebase` records the new one)",
				t, cur, recorded[t])})
		}
	}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
