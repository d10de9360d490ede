package coordlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Snapshot is what a read-only reader found in a job's state topic: the
// latest committed record of every key, read with read_committed up to the
// last stable offset. Operator commands (`checkpoint show`, `label
// status|list`, `verify`, `status`, `txn` guards) read it while the job
// runs or after it stopped: ReadSnapshot never creates a topic, never
// initialises a producer id and so never fences the job.
type Snapshot struct {
	// Job and Topic name the job and its state topic.
	Job, Topic string
	// End is the last stable offset the read stopped at.
	End int64
	// Records holds the latest record of each key.
	Records map[string]Record
}

// NoStateError is a job without a state topic, or without a state record
// of the scope asked for: it never ran with job.coordinator kafka (or its
// state topic was deleted). It wraps fs.ErrNotExist, like a missing file
// store.
type NoStateError struct {
	// Job, Topic and Scope name what was looked for; Scope is "" when the
	// topic itself is missing.
	Job, Topic, Scope string
}

// Error names the job, the state topic and, when the topic exists, the scope.
func (e *NoStateError) Error() string {
	if e.Scope == "" {
		return fmt.Sprintf("job %s has no Kafka state: state topic %s does not exist (the job never ran with job.coordinator kafka)",
			e.Job, e.Topic)
	}
	return fmt.Sprintf("job %s has no Kafka state for writer scope %s in state topic %s (key %s): nothing decided or announced yet",
		e.Job, e.Scope, e.Topic, RecordKey(e.Job, e.Scope))
}

// Unwrap returns fs.ErrNotExist.
func (e *NoStateError) Unwrap() error { return fs.ErrNotExist }

// ReadSnapshot reads job's state topic without writing anything. A missing
// state topic is a *NoStateError.
func ReadSnapshot(ctx context.Context, job string, clientOpts []kgo.Opt) (*Snapshot, error) {
	if job == "" {
		return nil, errors.New("coordinator log: job name is empty")
	}
	topic := StateTopic(job)
	cl, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator log %s: kafka client: %w", topic, err)
	}
	defer cl.Close()
	end, err := lastStable(ctx, kadm.NewClient(cl), job, topic)
	if err != nil {
		return nil, err
	}
	sn := &Snapshot{Job: job, Topic: topic, End: end, Records: map[string]Record{}}
	err = scan(ctx, clientOpts, topic, end, func(r *kgo.Record) error {
		rec, err := toRecord(topic, r)
		if err != nil {
			return err
		}
		if r.Value == nil { // a tombstone deletes the key
			delete(sn.Records, string(r.Key))
			return nil
		}
		sn.Records[string(r.Key)] = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sn, nil
}

// lastStable returns the last stable offset of topic's partition 0, or a
// *NoStateError when the topic does not exist.
func lastStable(ctx context.Context, adm *kadm.Client, job, topic string) (int64, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("coordinator log %s: describe: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return 0, &NoStateError{Job: job, Topic: topic}
	}
	if d.Err != nil {
		return 0, fmt.Errorf("coordinator log %s: describe (grant DESCRIBE and READ on the topic): %w", topic, d.Err)
	}
	lo, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("coordinator log %s: last stable offset: %w", topic, err)
	}
	o, ok := lo.Lookup(topic, 0)
	if !ok {
		return 0, fmt.Errorf("coordinator log %s: partition 0 missing", topic)
	}
	return o.Offset, nil
}

// Source is what a state record says about the source positions besides
// the checkpoint state.
type Source struct {
	// Topic is the source topic; TopicID its topic ID (hex) when the
	// positions were recorded.
	Topic   string `json:"topic"`
	TopicID string `json:"topic_id,omitempty"`
	// TopicIDs are the topic IDs (hex) of positions naming several
	// topics (Topic and TopicID are then empty): topic → ID.
	TopicIDs map[string]string `json:"topic_ids,omitempty"`
	// FirstStart is the persisted first-start position (kafka.Position
	// JSON), nil if none.
	FirstStart json.RawMessage `json:"first_start,omitempty"`
	// Slots is the job's writer slot count when the record was written
	// (job.slots); 0 (absent) means 1. Use RecordedSlots.
	Slots int `json:"slots,omitempty"`
}

// RecordedSlots returns the slot count the record holds: Slots, or 1
// when absent.
func (s Source) RecordedSlots() int { return max(s.Slots, 1) }

// IDs returns the recorded topic IDs in either form: topic → hex ID.
func (s Source) IDs() map[string]string { return sourceInfo(s).ids() }

// StateOf decodes the state record of scope ("" = DefaultScope): the
// checkpoint state, its source info and the record (offset, writer
// incarnation). A scope without a record is a *NoStateError.
func (sn *Snapshot) StateOf(scope string) (*checkpoint.State, Source, Record, error) {
	if scope == "" {
		scope = DefaultScope
	}
	rec, ok := sn.Records[RecordKey(sn.Job, scope)]
	if !ok {
		return nil, Source{}, Record{}, &NoStateError{Job: sn.Job, Topic: sn.Topic, Scope: scope}
	}
	st, doc, err := decodeDocument(sn.Topic, rec)
	if err != nil {
		return nil, Source{}, rec, err
	}
	return st, Source(doc.Source), rec, nil
}

// Scopes returns the writer scopes that have a state record, sorted.
func (sn *Snapshot) Scopes() []string {
	prefix := sn.Job + "/"
	var out []string
	for k := range sn.Records {
		rest, ok := strings.CutPrefix(k, prefix)
		if ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}
