package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
)

// kafkaAdmin reads high watermarks with kadm.
type kafkaAdmin struct {
	cl  *kgo.Client
	adm *kadm.Client
}

// newKafka connects to the kafka.* brokers (TLS and SASL as configured,
// kafkaopts).
func newKafka(cfg *config.Config) (*kafkaAdmin, error) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID("doris-sink-verify"), kgo.DialTimeout(10*time.Second))...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &kafkaAdmin{cl: cl, adm: kadm.NewClient(cl)}, nil
}

// HighWatermarks lists the end offsets of topic.
func (k *kafkaAdmin) HighWatermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	ends, err := k.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic == topic {
			out[o.Partition] = o.Offset
		}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions (does it exist?)", topic)
	}
	return out, nil
}

// Close closes the client.
func (k *kafkaAdmin) Close() { k.cl.Close() }
