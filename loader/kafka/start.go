package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errNoStart: Recover returned no position while the store holds a
// decision.
var errNoStart = errors.New("no position to resume from")

// begin assigns the source topics' partitions at the recovered position
// raw, or, on a first start (raw nil), at the offsets of Config.Start.
// Every partition gets a concrete offset so that every position names them
// all; partitions (and topics) the position does not name start at their
// earliest offset. A position naming a topic the configuration no longer
// selects is refused (*RemovedTopicError).
func (c *Connector) begin(ctx context.Context, raw []byte) error {
	pos, ok, err := ParsePosition(raw)
	if err != nil {
		return err
	}
	if err := c.checkPositionTopics(pos); err != nil {
		return err
	}
	topics, err := c.resolveTopics(ctx, pos)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.topics = topics
	c.mu.Unlock()
	earliest, err := c.listStartRetrying(ctx, topics)
	if err != nil {
		return err
	}
	base := earliest
	if !ok {
		if id, lbl, _ := c.sink.LastDecision(); id > 0 {
			// Recover returned no position although the store holds a
			// decision: it heals a checkpoint decided without its start (by
			// a doris-sink before SetStart). Resolving kafka.start again
			// would skip or re-load that checkpoint's rows.
			return fmt.Errorf("%w: the checkpoint store holds decision %d (label %s) but Recover returned none "+
				"(a checkpoint decided without its start, being healed): refusing to "+
				"apply kafka.start %q again, which could skip or re-load its rows (its end is shown by "+
				"`doris-sink checkpoint show`; its start was the job's first start)", errNoStart, id, lbl, c.cfg.Start)
		}
		if c.o.startStore != nil {
			base, err = c.persistedFirstStart(ctx, earliest)
		} else {
			base, err = c.firstStart(ctx, earliest)
		}
		if err != nil {
			return err
		}
		c.o.logger.Info("first start", "mode", c.cfg.Start, "position", base.position().String())
	} else {
		c.o.logger.Info("resuming", "position", pos.String())
	}
	c.mu.Lock()
	c.base = base
	c.mu.Unlock()
	return c.rewind(raw)
}

// rewind (re)starts consumption at pos (raw, nil for none): a fresh
// consuming client replaces the old one, so nothing buffered before the
// rewind can be delivered after it. Partitions pos does not name start at
// their base offset.
func (c *Connector) rewind(raw []byte) error {
	pos, ok, err := ParsePosition(raw)
	if err != nil {
		return err
	}
	if err := c.checkPositionTopics(pos); err != nil {
		return fmt.Errorf("recovered position: %w", err)
	}
	c.mu.Lock()
	offsets := c.base.clone()
	offsets.overlay(pos.PerTopic())
	c.keepOwned(offsets)
	cl, err := kgo.NewClient(c.consumerOpts(offsets)...)
	old := c.cl
	if err == nil {
		c.cl = cl
	}
	c.mu.Unlock()
	if old != nil {
		old.Close()
	}
	if err != nil {
		return fmt.Errorf("kafka consumer: %w", err)
	}
	c.next = offsets
	c.start = offsets.position()
	if !ok {
		// No decision yet: the loader records this first-start position
		// as the start of the first decision, so a Recover that heals it
		// returns it (docs/design.md §2 invariant 5).
		b, err := c.start.MarshalJSON()
		if err == nil {
			err = c.sink.SetStart(b)
		}
		if err != nil {
			return fmt.Errorf("first start at %s: %w", c.start.String(), err)
		}
	}
	for t, offs := range offsets {
		c.metrics.setRewound(t, offs)
	}
	c.pend = pending{}
	c.evo.reset()
	c.timerC, c.fired = nil, false
	return nil
}

// listStartRetrying is listStart, retried with backoff while a topic
// does not exist, up to the fail-fast grace (it may be being created);
// then Run stops with a *FatalError naming it. Other errors (kgo has
// retried them already: TLS, SASL, unreachable brokers) are returned.
func (c *Connector) listStartRetrying(ctx context.Context, topics []string) (topicOffsets, error) {
	for {
		out, err := c.listStart(ctx, topics)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		if u, ok := unfixableOf(err, c.topicNames()); !ok || u.kind != "kafka-topic" {
			return nil, err
		}
		if ferr := c.noteFailure(err); ferr != nil {
			return nil, ferr
		}
		c.o.logger.Warn("listing the topics' partitions failed; retrying", "topics", topics, "failures", c.fail.n, "err", err)
		if err := c.backoff(ctx); err != nil {
			return nil, err
		}
	}
}

// listStart returns the earliest offset of every partition of topics.
func (c *Connector) listStart(ctx context.Context, topics []string) (topicOffsets, error) {
	out := topicOffsets{}
	if len(topics) == 0 {
		return out, nil
	}
	lo, err := c.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", strings.Join(topics, ","), err)
	}
	for _, t := range topics {
		for p, o := range lo[t] {
			if o.Err != nil {
				return nil, fmt.Errorf("list start offsets of %s partition %d: %w", t, p, o.Err)
			}
			out.set(t, p, o.Offset)
		}
		if len(out[t]) == 0 {
			return nil, fmt.Errorf("list start offsets of %s: %w (or it has no partitions)", t, errTopicMissing)
		}
	}
	c.keepOwned(out)
	return out, nil
}

// firstStart resolves Config.Start to offsets.
func (c *Connector) firstStart(ctx context.Context, earliest topicOffsets) (topicOffsets, error) {
	out := earliest.clone()
	topics := slices.Sorted(maps.Keys(out))
	switch c.cfg.Start {
	case StartLatest:
		if len(topics) == 0 {
			break
		}
		lo, err := c.adm.ListEndOffsets(ctx, topics...)
		if err == nil {
			err = lo.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("kafka.start latest: list end offsets of %s: %w", strings.Join(topics, ","), err)
		}
		for _, t := range topics {
			for p, o := range lo[t] {
				if c.owns(t, p) {
					out.set(t, p, o.Offset)
				}
			}
		}
	case StartCommitted:
		resp, err := c.adm.FetchOffsets(ctx, c.cfg.Group)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			if !errors.Is(err, kerr.GroupIDNotFound) {
				return nil, fmt.Errorf("kafka.start committed: fetch offsets of group %s: %w", c.cfg.Group, err)
			}
			c.o.logger.Info("consumer group has no committed offsets; starting at earliest", "group", c.cfg.Group)
		}
		for _, t := range topics {
			for p := range out[t] {
				if o, ok := resp.Lookup(t, p); ok && o.At >= 0 {
					out.set(t, p, o.At)
				} else {
					c.o.logger.Info("no committed offset; starting at earliest", "group", c.cfg.Group, "topic", t, "partition", p)
				}
			}
		}
	case StartOffsets:
		// validate allows it with exactly one topic.
		t := c.cfg.topicList()[0]
		var unknown []int32
		for p, o := range c.cfg.StartOffsets {
			if !c.owns(t, p) {
				continue // another writer slot's partition: its slot applies it
			}
			if _, ok := out.get(t, p); !ok {
				unknown = append(unknown, p)
				continue
			}
			out.set(t, p, o)
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return nil, fmt.Errorf("kafka.start_offsets: topic %s has no partitions %v", t, unknown)
		}
	}
	return out, nil
}

// refreshPartitions assigns partitions added to the source topics after
// the start every PartitionRefresh until ctx ends. It asks a broker
// directly (kadm's helpers answer from a metadata cache that can be seconds
// old). A new partition is read from offset 0, its start: it was created
// less than a refresh ago, so retention cannot have deleted anything yet
// (and if it had, the read fails loudly: out-of-range offsets are fatal).
// New topics (TopicRegex) are found by the Run goroutine at checkpoint
// boundaries (discoverTopics), not here.
func (c *Connector) refreshPartitions(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.o.clock.After(c.cfg.PartitionRefresh):
		}
		for _, topic := range c.currentTopics() {
			c.refreshTopic(ctx, topic)
		}
	}
}

// refreshTopic assigns the partitions added to topic since it was last
// looked at.
func (c *Connector) refreshTopic(ctx context.Context, topic string) {
	parts, err := c.partitions(ctx, topic)
	if err != nil {
		if ctx.Err() == nil {
			c.o.logger.Warn("partition refresh failed", "topic", topic, "err", err)
		}
		return
	}
	var added []int32
	assign := map[int32]kgo.Offset{}
	c.mu.Lock()
	for _, p := range parts {
		if !c.owns(topic, p) {
			continue
		}
		if _, ok := c.base.get(topic, p); !ok {
			c.base.set(topic, p, 0)
			assign[p] = kgo.NewOffset().At(0)
			added = append(added, p)
		}
	}
	if len(added) > 0 && c.cl != nil {
		c.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	}
	c.mu.Unlock()
	if len(added) > 0 {
		slices.Sort(added)
		c.o.logger.Info("new partitions assigned from their start", "topic", topic, "partitions", added)
		if c.knobs.AfterPartitionsAdded != nil {
			c.knobs.AfterPartitionsAdded(added)
		}
	}
}

// partitions asks a broker for topic's partitions (no cache).
func (c *Connector) partitions(ctx context.Context, topic string) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, c.adminCl)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	var out []int32
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of %s: %w", topic, err)
		}
		for _, p := range t.Partitions {
			out = append(out, p.Partition)
		}
	}
	return out, nil
}
