package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumerFetchSizing: one partition may fill a whole fetch response
// (kgo's own per-partition default is 1 MiB, which cost a third more CPU
// per byte at steady state on one partition; docs/performance.md), with
// the default and with a configured FetchMaxBytes.
func TestConsumerFetchSizing(t *testing.T) {
	t.Parallel()
	for _, max := range []int32{0, 4 << 20} {
		c, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Topic: testTopic, Start: StartEarliest,
			CheckpointInterval: time.Hour, PartitionRefresh: -1, FetchMaxBytes: max}, &discardSink{})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(c.consumerOpts(topicOffsets{testTopic: {0: 0}})...)
		if err != nil {
			t.Fatal(err)
		}
		want := c.cfg.FetchMaxBytes
		fetch, part := cl.OptValue(kgo.FetchMaxBytes), cl.OptValue(kgo.FetchMaxPartitionBytes)
		cl.Close()
		if fetch != want || part != want {
			t.Errorf("FetchMaxBytes %d: the client fetches %v bytes, %v per partition; want %d for both", max, fetch, part, want)
		}
	}
}
