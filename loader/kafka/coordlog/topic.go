package coordlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ensureTopic makes sure topic exists with cleanup.policy=compact: it
// creates it (one partition, compacted) when missing, and refuses an
// existing topic that is not compacted, a topic that cannot be created,
// and one whose configuration cannot be read, each with a *TopicError
// naming the ACL or the configuration needed.
func ensureTopic(ctx context.Context, adm *kadm.Client, topic string, rf int16, log *slog.Logger) error {
	if rf == 0 {
		rf = -1
	}
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &compact}, topic)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		log.Info("state topic created", "topic", topic, "partitions", 1, "cleanup.policy", compact)
		return nil
	case errors.Is(err, kerr.TopicAlreadyExists):
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return &TopicError{Topic: topic, Err: err, Reason: fmt.Sprintf(
			"it does not exist and this principal may not create it: grant CREATE on topic %s (and DESCRIBE, DESCRIBE_CONFIGS, READ, WRITE), "+
				"or create it: kafka-topics.sh --create --topic %s --partitions 1 --config cleanup.policy=compact", topic, topic)}
	default:
		return &TopicError{Topic: topic, Err: err, Reason: "cannot create it (kafka-topics.sh --create --topic " + topic +
			" --partitions 1 --config cleanup.policy=compact)"}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return &TopicError{Topic: topic, Err: err, Reason: "cannot read its configuration (grant DESCRIBE_CONFIGS on the topic)"}
	}
	rc, err := rcs.On(topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return &TopicError{Topic: topic, Err: err, Reason: "cannot read its configuration (grant DESCRIBE_CONFIGS on the topic)"}
	}
	for _, c := range rc.Configs {
		if c.Key != "cleanup.policy" {
			continue
		}
		v := ""
		if c.Value != nil {
			v = *c.Value
		}
		if !slices.Contains(strings.Split(strings.ReplaceAll(v, " ", ""), ","), compact) {
			return &TopicError{Topic: topic, Reason: fmt.Sprintf(
				"cleanup.policy is %q, want compact (with delete, retention would drop the job's decisions): "+
					"kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", v, topic)}
		}
		return nil
	}
	return &TopicError{Topic: topic, Reason: "its configuration has no cleanup.policy; want compact"}
}
