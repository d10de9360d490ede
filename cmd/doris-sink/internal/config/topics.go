package config

import (
	"regexp"
	"slices"
)

// validateTopics checks kafka.topic, kafka.topics and kafka.topic_regex:
// exactly one is set when need includes NeedKafka, at most one otherwise;
// every topic is a valid name listed once; the regex compiles (anchored);
// kafka.start offsets need exactly one topic.
func (c *Config) validateTopics(need Need, bad func(key string, v any, allowed string)) {
	k := c.Kafka
	set := 0
	for _, on := range []bool{k.Topic != "", len(k.Topics) > 0, k.TopicRegex != ""} {
		if on {
			set++
		}
	}
	switch {
	case set > 1:
		bad("kafka.topics", k.DescribeTopics(), "kafka.topic, kafka.topics and kafka.topic_regex exclude each other: set one "+
			"(kafka.topic is the one-topic spelling of kafka.topics)")
	case set == 0 && need&NeedKafka != 0:
		if err := validTopic(""); err != "" {
			bad("kafka.topic", "", err+" (or set kafka.topics or kafka.topic_regex)")
		}
	}
	if k.Topic != "" {
		if err := validTopic(k.Topic); err != "" {
			bad("kafka.topic", k.Topic, err)
		}
	}
	for i, t := range k.Topics {
		if err := validTopic(t); err != "" {
			bad("kafka.topics", t, err)
		} else if slices.Index(k.Topics, t) != i {
			bad("kafka.topics", t, "listed twice")
		}
	}
	if k.TopicRegex != "" {
		if _, err := regexp.Compile(`^(?:` + k.TopicRegex + `)$`); err != nil {
			bad("kafka.topic_regex", k.TopicRegex, "a Go regexp (RE2 syntax): "+err.Error())
		}
	}
	if k.Start.Mode == StartExplicit && (len(k.SourceTopics()) > 1 || k.TopicRegex != "") {
		bad("kafka.start", "offsets", "a map of partition: offset names partitions of one topic: it needs exactly one topic, not kafka.topics of several or kafka.topic_regex")
	}
}
