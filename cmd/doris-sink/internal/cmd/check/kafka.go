package check

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
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
	topics, err := adm.ListTopics(ctx, cfg.Kafka.Topic)
	if err != nil {
		r.add(Fail, "kafka", "brokers %s unreachable or refusing: %v", brokers, err)
		return
	}
	r.add(OK, "kafka", "brokers %s reachable", brokers)
	td, ok := topics[cfg.Kafka.Topic]
	if !ok || td.Err != nil {
		reason := "does not exist"
		if ok && td.Err != nil {
			reason = td.Err.Error()
		}
		r.add(Fail, "kafka topic", "topic %s %s", cfg.Kafka.Topic, reason)
		return
	}
	r.add(OK, "kafka topic", "topic %s has %d partitions", cfg.Kafka.Topic, len(td.Partitions))
	if cfg.Kafka.Start.Mode == config.StartExplicit {
		for p := range cfg.Kafka.Start.Offsets {
			if _, ok := td.Partitions[p]; !ok {
				r.add(Fail, "kafka start", "kafka.start names partition %d, which topic %s lacks", p, cfg.Kafka.Topic)
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
