package coordlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// EvidenceLog is what ReadEvidence found in a job's evidence topic: every
// committed evidence record from Start (the first offset read) up to End
// (the last stable offset when the read began), in offset order.
type EvidenceLog struct {
	// Job and Topic name the job and its evidence topic.
	Job, Topic string
	// LogStart is the partition's log start offset: records before it
	// were deleted by retention (or DeleteRecords). Start is the first
	// offset read (max(LogStart, EvidenceReadOptions.From)); End the last
	// stable offset the read stopped at.
	LogStart, Start, End int64
	// Records are the evidence records read.
	Records []EvidenceRecord
}

// EvidenceReadOptions bound what ReadEvidence reads.
type EvidenceReadOptions struct {
	// From is the first offset to read (0: the log start).
	From int64
}

// NoEvidenceError is a job without an evidence topic: it never ran with
// a doris-sink that writes one (or the topic was deleted). It wraps
// fs.ErrNotExist.
type NoEvidenceError struct {
	Job, Topic string
}

// Error names the job and the topic.
func (e *NoEvidenceError) Error() string {
	return fmt.Sprintf("job %s has no evidence topic %s (no writer of this doris-sink version ran it yet)", e.Job, e.Topic)
}

// Unwrap returns fs.ErrNotExist.
func (e *NoEvidenceError) Unwrap() error { return fs.ErrNotExist }

// ReadEvidence reads job's evidence topic with read_committed up to its
// last stable offset, without writing anything (any machine with the
// job's Kafka settings may run it, while the job runs or after it
// stopped: it never fences a writer). A transaction still open when the
// read begins holds the last stable offset back (until it ends, at the
// latest transaction.timeout.ms later): its records and every later one
// are not read. A missing topic is a *NoEvidenceError.
func ReadEvidence(ctx context.Context, job string, clientOpts []kgo.Opt, opts EvidenceReadOptions) (*EvidenceLog, error) {
	if job == "" {
		return nil, errors.New("evidence: job name is empty")
	}
	topic := EvidenceTopic(job)
	cl, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("evidence topic %s: kafka client: %w", topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("evidence topic %s: describe: %w", topic, err)
	}
	if d, ok := td[topic]; !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return nil, &NoEvidenceError{Job: job, Topic: topic}
	} else if d.Err != nil {
		return nil, fmt.Errorf("evidence topic %s: describe (grant DESCRIBE and READ on the topic): %w", topic, d.Err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("evidence topic %s: log start offset: %w", topic, err)
	}
	so, _ := starts.Lookup(topic, 0)
	end, err := lastStable(ctx, adm, job, topic)
	if err != nil {
		return nil, err
	}
	el := &EvidenceLog{Job: job, Topic: topic, LogStart: so.Offset, Start: max(so.Offset, opts.From), End: end}
	if el.Start >= end {
		return el, nil
	}
	err = scanFrom(ctx, clientOpts, topic, el.Start, end, func(r *kgo.Record) error {
		rec, err := decodeEvidence(topic, r)
		if err != nil {
			return err
		}
		el.Records = append(el.Records, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return el, nil
}

// decodeEvidence decodes one evidence record (unknown fields are
// ignored: a newer writer's records stay readable; another format is an
// error naming the offset).
func decodeEvidence(topic string, r *kgo.Record) (EvidenceRecord, error) {
	if f := header(r, HeaderFormat); f != evidenceFormatHeader() {
		return EvidenceRecord{}, fmt.Errorf("evidence topic %s: record at offset %d has format %q, this doris-sink reads %q",
			topic, r.Offset, f, evidenceFormatHeader())
	}
	var rec EvidenceRecord
	if err := json.NewDecoder(bytes.NewReader(r.Value)).Decode(&rec); err != nil {
		return EvidenceRecord{}, fmt.Errorf("evidence topic %s: record at offset %d: %w", topic, r.Offset, err)
	}
	for i, e := range rec.Entries {
		if !ledger.ValidEvent(e.Event) {
			return EvidenceRecord{}, fmt.Errorf("evidence topic %s: record at offset %d: entry %d has unknown event %q",
				topic, r.Offset, i, e.Event)
		}
	}
	rec.Offset, rec.Incarnation = r.Offset, header(r, HeaderIncarnation)
	return rec, nil
}

// Scopes returns the writer scopes whose Store wrote evidence, sorted.
func (el *EvidenceLog) Scopes() []string {
	seen := map[string]bool{}
	for _, r := range el.Records {
		if r.Writer == EvidenceWriterSlot {
			seen[r.Scope] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// EntriesOf returns the entries the Store of scope wrote, in order.
func (el *EvidenceLog) EntriesOf(scope string) []ledger.Entry {
	var out []ledger.Entry
	for _, r := range el.Records {
		if r.Writer == EvidenceWriterSlot && r.Scope == scope {
			out = append(out, r.Entries...)
		}
	}
	return out
}

// RecordsOf returns the records the Store of scope wrote, in order.
func (el *EvidenceLog) RecordsOf(scope string) []EvidenceRecord {
	var out []EvidenceRecord
	for _, r := range el.Records {
		if r.Writer == EvidenceWriterSlot && r.Scope == scope {
			out = append(out, r)
		}
	}
	return out
}

// scanFrom is scan from offset start instead of the partition's start.
func scanFrom(ctx context.Context, clientOpts []kgo.Opt, topic string, start, end int64, fn func(*kgo.Record) error) error {
	opts := append(append([]kgo.Opt{}, clientOpts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(start)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("evidence topic %s: reader: %w", topic, err)
	}
	defer cl.Close()
	next := start
	var bad error
	for next < end && bad == nil {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("evidence topic %s: read up to offset %d (at %d): %w", topic, end, next, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("evidence topic %s: read at offset %d: %w", topic, next, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if bad != nil || r.Attrs.IsControl() || r.Offset >= end || r.Offset < start {
				return
			}
			bad = fn(r)
		})
	}
	return bad
}
