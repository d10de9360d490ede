package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// check says what run does with the dead-letter topic: missing → FAIL
// (run refuses to start), naming the command that creates it; OK when it
// exists or records.dead_letter_create is set.
func TestCheckDeadLetterTopic(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders-dlq"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	for _, tc := range []struct {
		topic  string
		create bool
		status string
		says   string
	}{
		{"orders-dlq", false, OK, "exists"},
		{"missing-dlq", false, Fail, "kafka-topics.sh --create --topic missing-dlq"},
		{"missing-dlq", true, OK, "run creates it"},
	} {
		cfg := &config.Config{Kafka: config.Kafka{Brokers: kc.ListenAddrs(), Topic: "orders"},
			Records: config.Records{DeadLetterTopic: tc.topic, DeadLetterCreate: tc.create}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := &Report{}
		checkKafka(ctx, r, cfg)
		cancel()
		found := false
		for _, l := range r.Lines {
			if l.Check == "dead letter topic" {
				found = true
				if l.Status != tc.status || !strings.Contains(l.Detail, tc.says) {
					t.Errorf("%s (create %v): %s %q, want %s saying %q", tc.topic, tc.create, l.Status, l.Detail, tc.status, tc.says)
				}
			}
		}
		if !found {
			t.Errorf("%s: no dead letter topic line in %+v", tc.topic, r.Lines)
		}
	}
}
