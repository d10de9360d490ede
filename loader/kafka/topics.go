package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RemovedTopicError refuses a start whose recorded position names a topic
// the configuration no longer selects (kafka.topic, kafka.topics or
// kafka.topic_regex): resuming without it would silently drop where that
// topic was, and adding it back later would re-read or skip its records.
type RemovedTopicError struct {
	// Topic is the topic the position names; Position the position.
	Topic, Position string
}

// Error names the topic and the deliberate ways out.
func (e *RemovedTopicError) Error() string {
	return fmt.Sprintf("the job's recorded position %s names topic %s, which the configuration (kafka.topic, kafka.topics, "+
		"kafka.topic_regex) no longer selects: nothing was loaded; add the topic back, or rebase the job deliberately "+
		"(`doris-sink checkpoint rebase -c <job config> --to earliest|latest|--offsets ... --dry-run`, then --yes), "+
		"which records positions of the configured topics only", e.Position, e.Topic)
}

// topicNames returns the current source topics joined by "," (for
// messages).
func (c *Connector) topicNames() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.topics) == 0 {
		if c.cfg.TopicRegex != "" {
			return "matching " + c.cfg.TopicRegex
		}
		return strings.Join(c.cfg.topicList(), ",")
	}
	return strings.Join(c.topics, ",")
}

// currentTopics returns a copy of the current source topics.
func (c *Connector) currentTopics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.topics)
}

// selects reports whether the configuration selects topic: one of the
// listed topics, or a name TopicRegex matches that is not excluded.
func (c *Connector) selects(topic string) bool {
	if c.re == nil {
		return slices.Contains(c.cfg.topicList(), topic)
	}
	return c.re.MatchString(topic) && !c.excluded(topic, false)
}

// excluded reports whether topic never matches TopicRegex: internal (a
// "__" name or marked internal by the broker), the dead-letter topic or an
// ExcludeTopics entry.
func (c *Connector) excluded(topic string, internal bool) bool {
	return internal || strings.HasPrefix(topic, "__") || topic == c.cfg.DeadLetterTopic ||
		slices.Contains(c.cfg.ExcludeTopics, topic)
}

// checkPositionTopics refuses a position naming a topic the configuration
// no longer selects (*RemovedTopicError).
func (c *Connector) checkPositionTopics(pos Position) error {
	for _, t := range pos.TopicNames() {
		if !c.selects(t) {
			return &RemovedTopicError{Topic: t, Position: pos.String()}
		}
	}
	return nil
}

// resolveTopics returns the topics to read at the start, sorted: the
// listed ones, or those TopicRegex matches now together with those pos
// names (a recorded topic that is gone is then reported missing, not
// forgotten).
func (c *Connector) resolveTopics(ctx context.Context, pos Position) ([]string, error) {
	if c.re == nil {
		out := slices.Clone(c.cfg.topicList())
		slices.Sort(out)
		return out, nil
	}
	matched, err := c.matchingTopics(ctx)
	if err != nil {
		return nil, err
	}
	out := append(matched, pos.TopicNames()...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// matchingTopics asks a broker for every topic (no cache) and returns
// those TopicRegex selects, sorted.
func (c *Connector) matchingTopics(ctx context.Context) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest() // nil Topics: all topics
	resp, err := req.RequestWith(ctx, c.adminCl)
	if err != nil {
		return nil, fmt.Errorf("kafka.topic_regex %s: list topics: %w", c.cfg.TopicRegex, err)
	}
	var out []string
	for _, t := range resp.Topics {
		if t.Topic == nil || kerr.ErrorForCode(t.ErrorCode) != nil || len(t.Partitions) == 0 {
			continue
		}
		if c.re.MatchString(*t.Topic) && !c.excluded(*t.Topic, t.IsInternal) {
			out = append(out, *t.Topic)
		}
	}
	slices.Sort(out)
	return out, nil
}

// maybeDiscoverTopics runs discoverTopics when the look for new topics is
// due (TopicRegex; every PartitionRefresh) and re-arms its timer. The
// caller is at a checkpoint boundary: nothing read since the last
// decision.
func (c *Connector) maybeDiscoverTopics(ctx context.Context) {
	if !c.topicsDue && c.topicsC != nil {
		select {
		case <-c.topicsC:
			c.topicsDue = true
		default:
		}
	}
	if !c.topicsDue {
		return
	}
	c.topicsDue = false
	c.discoverTopics(ctx)
	c.topicsC = c.o.clock.After(c.cfg.PartitionRefresh)
}

// discoverTopics, with TopicRegex, adds the topics that match it since the
// last look: it runs on the Run goroutine only while no checkpoint is open
// (nothing read since the last decision), so a new topic's records all
// belong to checkpoints that began after it was assigned. Its partitions
// are read from their earliest offsets. Failures are logged and retried at
// the next look.
func (c *Connector) discoverTopics(ctx context.Context) {
	matched, err := c.matchingTopics(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.o.logger.Warn("topic refresh failed", "topic_regex", c.cfg.TopicRegex, "err", err)
		}
		return
	}
	known := c.currentTopics()
	var added []string
	for _, t := range matched {
		if !slices.Contains(known, t) {
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return
	}
	earliest, err := c.listStart(ctx, added)
	if err != nil {
		if ctx.Err() == nil {
			c.o.logger.Warn("listing a new topic's partitions failed; retried at the next refresh", "topics", added, "err", err)
		}
		return
	}
	assign := map[string]map[int32]kgo.Offset{}
	c.mu.Lock()
	for t, offs := range earliest {
		assign[t] = map[int32]kgo.Offset{}
		for p, o := range offs {
			c.base.set(t, p, o)
			c.next.set(t, p, o)
			assign[t][p] = kgo.NewOffset().At(o)
		}
	}
	c.topics = append(c.topics, added...)
	slices.Sort(c.topics)
	if c.cl != nil {
		c.cl.AddConsumePartitions(assign)
	}
	c.mu.Unlock()
	c.start = PositionOf(c.next.clone()) // nothing is open: the next checkpoint starts here
	for t, offs := range earliest {
		c.metrics.setRewound(t, offs)
	}
	c.o.logger.Info("new topics matching kafka.topic_regex assigned from their earliest offsets", "topic_regex",
		c.cfg.TopicRegex, "topics", added, "position", PositionOf(earliest).String())
	if c.knobs.AfterTopicsAdded != nil {
		c.knobs.AfterTopicsAdded(added)
	}
}
