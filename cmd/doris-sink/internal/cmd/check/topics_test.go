package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// check looks at every topic of kafka.topics (a missing one fails, naming
// it) and at the topics kafka.topic_regex matches (none is a warning; the
// state and dead-letter topics are not counted).
func TestCheckKafkaTopics(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "inv.a", "inv.dlq", "doris-sink.state.j"),
		kfake.SeedTopics(1, "inv.b"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines := func(k config.Kafka) (string, int) {
		k.Brokers = kc.ListenAddrs()
		cfg := &config.Config{Job: config.Job{Name: "j"}, Kafka: k, Records: config.Records{DeadLetterTopic: "inv.dlq"}}
		var r Report
		checkKafka(ctx, &r, cfg)
		var text []string
		for _, l := range r.Lines {
			text = append(text, l.Status+" "+l.Check+" "+l.Detail)
		}
		return strings.Join(text, "\n"), r.Failed
	}
	all, failed := lines(config.Kafka{Topics: []string{"inv.a", "inv.b", "inv.gone"}})
	for _, want := range []string{"OK kafka topic topic inv.a has 2 partitions", "OK kafka topic topic inv.b has 1 partitions",
		"FAIL kafka topic topic inv.gone "} {
		if !strings.Contains(all, want) {
			t.Errorf("kafka.topics: lines lack %q:\n%s", want, all)
		}
	}
	if failed != 1 {
		t.Errorf("kafka.topics: failed %d, want 1", failed)
	}
	all, failed = lines(config.Kafka{TopicRegex: `inv\..*|doris-sink\..*`})
	if want := `matches inv.a (2 partitions), inv.b (1 partitions)`; !strings.Contains(all, want) || failed != 0 {
		t.Errorf("kafka.topic_regex: lines lack %q (failed %d):\n%s", want, failed, all)
	}
	all, _ = lines(config.Kafka{TopicRegex: "nothing.*"})
	if !strings.Contains(all, "WARN kafka topic no topic matches kafka.topic_regex nothing.*") {
		t.Errorf("kafka.topic_regex matching nothing: %s", all)
	}
}
