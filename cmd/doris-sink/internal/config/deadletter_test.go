package config

import (
	"strings"
	"testing"
)

// Exactly-once dead letters need the Kafka transaction of job.coordinator
// kafka: with the file coordinator a dead-letter topic is refused unless
// records.dead_letter_delivery: at_least_once is chosen explicitly, and the
// refusal names both ways out.
func TestDeadLetterDeliveryNeedsKafkaCoordinator(t *testing.T) {
	t.Parallel()
	_, err := load(t, merge(minimal, "job: {coordinator: file}\nrecords: {dead_letter_topic: orders-dlq}\n"), nil, nil, NeedRun)
	if err == nil {
		t.Fatal("dead_letter_topic with job.coordinator file loaded, want a refusal")
	}
	keyError(t, err, "records.dead_letter_delivery")
	for _, want := range []string{"job.coordinator: kafka", "at_least_once"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	c := mustLoad(t, merge(minimal, "job: {coordinator: file}\nrecords: {dead_letter_topic: orders-dlq, dead_letter_delivery: at_least_once}\n"), nil, nil, NeedRun)
	if c.Records.DeadLetterDelivery != DeadLetterAtLeastOnce {
		t.Errorf("dead_letter_delivery = %q, want at_least_once", c.Records.DeadLetterDelivery)
	}
	// The default coordinator (kafka) takes exactly-once dead letters.
	if _, err := load(t, merge(minimal, "records: {dead_letter_topic: orders-dlq}\n"), nil, nil, NeedRun); err != nil {
		t.Errorf("dead_letter_topic with the default coordinator: %v", err)
	}
	c = mustLoad(t, merge(minimal, "job: {coordinator: kafka}\nrecords: {dead_letter_topic: orders-dlq, dead_letter_create: true, dead_letter_buffer_bytes: 1MiB}\n"), nil, nil, NeedRun)
	if c.Records.DeadLetterDelivery != DeadLetterExactlyOnce || !c.Records.DeadLetterCreate || c.Records.DeadLetterBufferBytes != 1<<20 {
		t.Errorf("records %+v, want exactly_once, create, 1MiB", c.Records)
	}
	if _, err := load(t, merge(minimal, "records: {dead_letter_delivery: twice}\n"), nil, nil, NeedRun); err == nil {
		t.Error("dead_letter_delivery: twice loaded, want a refusal")
	} else {
		keyError(t, err, "records.dead_letter_delivery")
	}
}
