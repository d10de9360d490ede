package kafka

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrTopicRecreated is matched (errors.Is) by every refusal of a source
// topic that was deleted and created again under the job: the Connector's
// *TopicRecreatedError while it runs, and the coordinator store's refusal
// at start (loader/kafka/coordlog.TopicRecreatedError).
var ErrTopicRecreated = errors.New("source topic was deleted and recreated")

// TopicIDRecorder is a StartStore that records the topic IDs its positions
// belong to (the Kafka coordinator store). The Connector takes them as the
// IDs it may read: a topic whose current ID differs was recreated since
// they were recorded.
type TopicIDRecorder interface {
	// TopicIDs returns topic → topic ID (hex) of the source topics whose
	// IDs the store knows.
	TopicIDs() map[string]string
}

// TopicRecreatedError stops the Connector when a source topic it reads was
// deleted and created again while it ran (Kafka gives it a new topic ID):
// the stored offsets belong to a log that no longer exists, and applying
// them to the new log would skip or re-read records. The Connector reads
// nothing of the new log (kgo keeps the old ID and answers
// UNKNOWN_TOPIC_ID; a fetch under another ID is refused before its
// records are handled), the open checkpoint is not decided, and Run
// returns this at once (no fail-fast grace: the topic will not come back).
type TopicRecreatedError struct {
	// Topic is the source topic; OldID the ID the job read (hex), NewID
	// the topic's ID now ("" when unknown).
	Topic, OldID, NewID string
	// Checkpoint is the last decided checkpoint (0: none); Decided the
	// next offset per partition a restart would apply (its end, or the
	// first start).
	Checkpoint uint64
	Decided    map[int32]int64
	// LogStart and LogEnd are the new log's range per partition (nil when
	// listing failed).
	LogStart, LogEnd map[int32]int64
}

// Error says which topic (both IDs), what is affected (each partition's
// decided offset against the new log) and the deliberate way out.
func (e *TopicRecreatedError) Error() string {
	var b strings.Builder
	newID := e.NewID
	if newID == "" {
		newID = "unknown"
	}
	fmt.Fprintf(&b, "source topic %s was deleted and recreated while the job ran: the job read topic ID %s, the topic's ID is now %s; "+
		"the job stopped without reading the new log. Every partition is affected:", e.Topic, e.OldID, newID)
	parts := slices.Sorted(maps.Keys(e.Decided))
	for _, p := range slices.Sorted(maps.Keys(e.LogEnd)) {
		if _, ok := e.Decided[p]; !ok {
			parts = append(parts, p)
		}
	}
	for _, p := range parts {
		fmt.Fprintf(&b, " %s/%d", e.Topic, p)
		if o, ok := e.Decided[p]; ok {
			fmt.Fprintf(&b, " decided next offset %d", o)
		} else {
			b.WriteString(" no decided offset")
		}
		if end, ok := e.LogEnd[p]; ok {
			fmt.Fprintf(&b, " vs the new log %d..%d;", e.LogStart[p], end)
		} else {
			b.WriteString(", not in the new log;")
		}
	}
	what := "the persisted first start"
	if e.Checkpoint > 0 {
		what = fmt.Sprintf("checkpoint %d", e.Checkpoint)
	}
	fmt.Fprintf(&b, " the rows up to %s stay loaded exactly once; the open checkpoint was not decided, and nothing of the new "+
		"log was loaded. To load the new topic deliberately, with the job stopped: `doris-sink checkpoint rebase -c <job config> "+
		"--to earliest --dry-run` (or --to latest, or --offsets <partition>=<offset>,...), then the same with --yes; the rebase "+
		"is recorded as an operator decision", what)
	return b.String()
}

// Is matches ErrTopicRecreated.
func (e *TopicRecreatedError) Is(target error) bool { return target == ErrTopicRecreated }

// topicID is a topic ID (zero: unknown).
type topicID = [16]byte

// expectTopicIDs records the IDs of topics the Connector may read: those
// the StartStore recorded (TopicIDRecorder), else the current ones. A
// topic whose current ID differs from the recorded one was recreated
// between the store's open and now: *TopicRecreatedError. A topic that
// does not exist is left to the missing-topic handling.
func (c *Connector) expectTopicIDs(ctx context.Context, topics []string) error {
	cur, err := c.currentTopicIDs(ctx, topics)
	if err != nil {
		return err
	}
	var recorded map[string]string
	if r, ok := c.o.startStore.(TopicIDRecorder); ok {
		recorded = r.TopicIDs()
	}
	for _, t := range topics {
		id, ok := cur[t]
		if !ok {
			continue
		}
		if hx, ok := recorded[t]; ok && hx != "" && hx != hex.EncodeToString(id[:]) {
			return c.recreatedError(ctx, t, hx, hex.EncodeToString(id[:]))
		}
		c.mu.Lock()
		if c.tids == nil {
			c.tids = map[string]topicID{}
		}
		c.tids[t] = id
		c.mu.Unlock()
	}
	return nil
}

// currentTopicIDs asks a broker (no cache) for the IDs of topics; topics
// that do not exist (or have no ID: a broker before Kafka 2.8) are left
// out.
func (c *Connector) currentTopicIDs(ctx context.Context, topics []string) (map[string]topicID, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, c.adminCl)
	if err != nil {
		return nil, fmt.Errorf("topic IDs of %s: %w", strings.Join(topics, ","), err)
	}
	out := map[string]topicID{}
	for _, t := range resp.Topics {
		if t.Topic == nil || kerr.ErrorForCode(t.ErrorCode) != nil || t.TopicID == (topicID{}) {
			continue
		}
		out[*t.Topic] = t.TopicID
	}
	return out, nil
}

// fetchedTopic checks the topic ID of a fetch answer (kgo reports it with
// Kafka 3.1+): another ID than the one the Connector reads means the
// topic was recreated and this client reads the new log (a consuming
// client created after the recreation adopts the new ID): refused before
// any of its records is handled. A topic seen first records its ID.
func (c *Connector) fetchedTopic(ctx context.Context, topic string, id topicID) error {
	if id == (topicID{}) {
		return nil
	}
	c.mu.Lock()
	want, ok := c.tids[topic]
	if !ok {
		if c.tids == nil {
			c.tids = map[string]topicID{}
		}
		c.tids[topic] = id
	}
	c.mu.Unlock()
	if !ok || want == id {
		return nil
	}
	return c.recreatedError(ctx, topic, hex.EncodeToString(want[:]), hex.EncodeToString(id[:]))
}

// recreatedNow is called when a fetch says a topic is unknown
// (UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID) or an offset is out of
// range: when the topic exists under another ID than the one the
// Connector reads, it was recreated (*TopicRecreatedError); nil when it is
// missing, the same, or cannot be looked up.
func (c *Connector) recreatedNow(ctx context.Context, topic string) error {
	c.mu.Lock()
	want, ok := c.tids[topic]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	cur, err := c.currentTopicIDs(ctx, []string{topic})
	if err != nil {
		return nil // the missing-topic handling reports it
	}
	id, exists := cur[topic]
	if !exists || id == want {
		return nil
	}
	return c.recreatedError(ctx, topic, hex.EncodeToString(want[:]), hex.EncodeToString(id[:]))
}

// recreatedError builds the *TopicRecreatedError of topic: the position a
// restart would apply (the start of the open checkpoint) against the new
// log's range.
func (c *Connector) recreatedError(ctx context.Context, topic, oldID, newID string) error {
	id, _, _ := c.sink.LastDecision()
	e := &TopicRecreatedError{Topic: topic, OldID: oldID, NewID: newID, Checkpoint: id, Decided: maps.Clone(c.start.Of(topic))}
	if len(e.Decided) == 0 {
		e.Decided = nil
	}
	starts, serr := c.adm.ListStartOffsets(ctx, topic)
	ends, eerr := c.adm.ListEndOffsets(ctx, topic)
	if serr == nil && eerr == nil {
		e.LogStart, e.LogEnd = map[int32]int64{}, map[int32]int64{}
		for p, o := range starts[topic] {
			if o.Err == nil {
				e.LogStart[p] = o.Offset
			}
		}
		for p, o := range ends[topic] {
			if o.Err == nil {
				e.LogEnd[p] = o.Offset
			}
		}
	}
	c.o.logger.Error("source topic recreated while the job ran: stopping without reading the new log", "topic", topic,
		"old_topic_id", oldID, "new_topic_id", newID, "decided", PositionOf(map[string]map[int32]int64{topic: e.Decided}).String())
	return e
}
