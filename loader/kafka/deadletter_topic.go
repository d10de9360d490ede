package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeadLetterTopicError refuses a run before it reads anything: the
// dead-letter topic does not exist (and Config.DeadLetterCreate is not
// set), or the broker says this principal may not write to it.
type DeadLetterTopicError struct {
	// Topic is the dead-letter topic.
	Topic string
	// Missing is set when the topic does not exist, else it is not
	// writable.
	Missing bool
	// Err is Kafka's answer, if any.
	Err error
}

// Error names the topic and the command that fixes it.
func (e *DeadLetterTopicError) Error() string {
	if e.Missing {
		return fmt.Sprintf("records.dead_letter_topic %s does not exist: create it before starting, e.g. "+
			"`kafka-topics.sh --bootstrap-server <brokers> --create --topic %s --partitions <n>`, or set "+
			"records.dead_letter_create: true to let doris-sink create it (with kafka.topic's partition count)",
			e.Topic, e.Topic)
	}
	return fmt.Sprintf("records.dead_letter_topic %s is not writable by this principal: grant it, e.g. "+
		"`kafka-acls.sh --bootstrap-server <brokers> --add --allow-principal User:<user> --operation Write "+
		"--operation Describe --topic %s`: %v", e.Topic, e.Topic, e.Err)
}

// Unwrap returns Err.
func (e *DeadLetterTopicError) Unwrap() error { return e.Err }

// Kafka's ACL operation bits in a topic's authorized operations
// (KIP-430): ALL and WRITE.
const (
	aclAll   = 1 << int32(kmsg.ACLOperationAll)
	aclWrite = 1 << int32(kmsg.ACLOperationWrite)
)

// producerMaxBytes is franz-go's default ProducerBatchMaxBytes (the
// client's own cap on a record batch), so a dead letter never exceeds it
// either.
const producerMaxBytes = 1000012

// kafkaDefaultMaxMessageBytes is Kafka's default message.max.bytes, used
// when the broker does not report the topic's max.message.bytes.
const kafkaDefaultMaxMessageBytes = 1048588

// checkDeadLetterTopic runs before anything is read when a dead-letter
// topic is configured: the topic must exist (it is created when
// Config.DeadLetterCreate is set) and be writable (the broker's authorized
// operations, when it reports them); its partition count and
// max.message.bytes are recorded (dead letters are truncated to fit).
func (c *Connector) checkDeadLetterTopic(ctx context.Context) error {
	t := c.cfg.DeadLetterTopic
	if t == "" {
		return nil
	}
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(t)
	req.Topics = append(req.Topics, rt)
	req.IncludeTopicAuthorizedOperations = true
	resp, err := req.RequestWith(ctx, c.adminCl)
	if err != nil {
		return fmt.Errorf("records.dead_letter_topic %s: metadata: %w", t, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("records.dead_letter_topic %s: metadata answered %d topics", t, len(resp.Topics))
	}
	mt := resp.Topics[0]
	err = kerr.ErrorForCode(mt.ErrorCode)
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition) && c.cfg.DeadLetterCreate:
		if err := c.createDeadLetterTopic(ctx); err != nil {
			return err
		}
		return c.checkDeadLetterTopic(ctx)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return &DeadLetterTopicError{Topic: t, Missing: true, Err: err}
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return &DeadLetterTopicError{Topic: t, Err: err}
	case err != nil:
		return fmt.Errorf("records.dead_letter_topic %s: metadata: %w", t, err)
	}
	// math.MinInt32: the broker did not report them (older than 2.3).
	if ops := mt.AuthorizedOperations; ops != math.MinInt32 && ops&(aclAll|aclWrite) == 0 {
		return &DeadLetterTopicError{Topic: t, Err: fmt.Errorf("authorized operations %#x lack WRITE", ops)}
	}
	c.dlPartitions = int32(len(mt.Partitions))
	max, err := c.topicMaxMessageBytes(ctx, t)
	if err != nil {
		return err
	}
	c.dlMaxBytes = min(max, producerMaxBytes)
	if c.o.stager != nil {
		c.o.stager.SetDeadLetterBatchBytes(c.dlMaxBytes)
	}
	c.o.logger.Info("dead-letter topic checked", "dead_letter_topic", t, "partitions", c.dlPartitions,
		"max_message_bytes", max, "exactly_once", c.o.stager != nil)
	return nil
}

// topicMaxMessageBytes reads topic's max.message.bytes (its own or the
// broker default).
func (c *Connector) topicMaxMessageBytes(ctx context.Context, topic string) (int64, error) {
	rcs, err := c.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("records.dead_letter_topic %s: describe configs: %w", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return 0, fmt.Errorf("records.dead_letter_topic %s: describe configs: %w", topic, err)
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == "max.message.bytes" && cfg.Value != nil {
			n, err := strconv.ParseInt(*cfg.Value, 10, 64)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("records.dead_letter_topic %s: max.message.bytes %q is not a positive integer", topic, *cfg.Value)
			}
			return n, nil
		}
	}
	return kafkaDefaultMaxMessageBytes, nil
}

// createDeadLetterTopic creates the dead-letter topic with the source
// topic's partition count and the broker's default replication factor
// (Config.DeadLetterCreate).
func (c *Connector) createDeadLetterTopic(ctx context.Context) error {
	t := c.cfg.DeadLetterTopic
	n := int32(1) // the most partitions of a listed source topic (1 with a topic regex)
	if topics := c.cfg.topicList(); len(topics) > 0 {
		parts, err := c.adm.ListTopics(ctx, topics...)
		if err == nil {
			err = parts.Error()
		}
		if err != nil {
			return fmt.Errorf("records.dead_letter_create: partition count of %s: %w", strings.Join(topics, ","), err)
		}
		for _, t := range topics {
			n = max(n, int32(len(parts[t].Partitions)))
		}
	}
	resp, err := c.adm.CreateTopic(ctx, n, -1, nil, t)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("records.dead_letter_create: create %s (%d partitions): %w", t, n, err)
	}
	c.o.logger.Info("dead-letter topic created", "dead_letter_topic", t, "partitions", n)
	return nil
}
