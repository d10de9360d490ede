package check

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

func checkKafka(ctx context.Context, r *Report, cfg *config.Config) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		r.add(Fail, "kafka", "%v", err)
		return
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		r.add(Fail, "kafka", "client: %v", err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	brokers := strings.Join(cfg.Kafka.Brokers, ",")
	names := cfg.Kafka.SourceTopics() // nil with kafka.topic_regex: every topic is listed
	topics, err := adm.ListTopics(ctx, names...)
	if err != nil {
		r.add(Fail, "kafka", "brokers %s unreachable or refusing: %v", brokers, err)
		return
	}
	r.add(OK, "kafka", "brokers %s reachable", brokers)
	if re := cfg.Kafka.TopicRegex; re != "" {
		checkTopicRegex(r, cfg, topics)
		return
	}
	for _, name := range names {
		td, ok := topics[name]
		if !ok || td.Err != nil {
			reason := "does not exist"
			if ok && td.Err != nil {
				reason = td.Err.Error()
			}
			r.add(Fail, "kafka topic", "topic %s %s", name, reason)
			continue
		}
		r.add(OK, "kafka topic", "topic %s has %d partitions", name, len(td.Partitions))
		if cfg.Kafka.Start.Mode == config.StartExplicit {
			for p := range cfg.Kafka.Start.Offsets {
				if _, ok := td.Partitions[p]; !ok {
					r.add(Fail, "kafka start", "kafka.start names partition %d, which topic %s lacks", p, name)
				}
			}
		}
	}
	if t := cfg.Records.DeadLetterTopic; t != "" {
		dl, err := adm.ListTopics(ctx, t)
		switch {
		case (err != nil || dl[t].Err != nil) && cfg.Records.DeadLetterCreate:
			r.add(OK, "dead letter topic", "topic %s not found; run creates it (records.dead_letter_create)", t)
		case err != nil || dl[t].Err != nil:
			r.add(Fail, "dead letter topic", "topic %s not found: run refuses to start without it; create it "+
				"(kafka-topics.sh --create --topic %s) or set records.dead_letter_create: true", t, t)
		default:
			r.add(OK, "dead letter topic", "topic %s exists (%d partitions)", t, len(dl[t].Partitions))
		}
	}
}

// checkTopicRegex reports the topics kafka.topic_regex selects now
// (internal, state and dead-letter topics never match); none is a warning:
// the job waits for one to be created.
func checkTopicRegex(r *Report, cfg *config.Config, topics kadm.TopicDetails) {
	re, err := regexp.Compile(`^(?:` + cfg.Kafka.TopicRegex + `)$`)
	if err != nil {
		r.add(Fail, "kafka topic", "kafka.topic_regex %q: %v", cfg.Kafka.TopicRegex, err)
		return
	}
	var matched []string
	for name, td := range topics {
		if td.Err != nil || td.IsInternal || strings.HasPrefix(name, "__") || name == cfg.Records.DeadLetterTopic ||
			name == coordlog.StateTopic(cfg.Job.Name) || !re.MatchString(name) {
			continue
		}
		matched = append(matched, fmt.Sprintf("%s (%d partitions)", name, len(td.Partitions)))
	}
	if len(matched) == 0 {
		r.add(Warn, "kafka topic", "no topic matches kafka.topic_regex %s yet: the job reads nothing until one is created", cfg.Kafka.TopicRegex)
		return
	}
	slices.Sort(matched)
	r.add(OK, "kafka topic", "kafka.topic_regex %s matches %s", cfg.Kafka.TopicRegex, strings.Join(matched, ", "))
}
