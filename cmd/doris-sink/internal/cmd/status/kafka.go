package status

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
)

// offsets are a partition's log start and high watermark.
type offsets struct{ start, end int64 }

// listOffsets lists the log start and the high watermark of every
// partition of topic, a source topic of cfg (TLS and SASL as configured,
// kafkaopts).
func listOffsets(ctx context.Context, cfg *config.Config, topic string) (map[int32]offsets, error) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID("doris-sink-status"))...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	out := map[int32]offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic == topic {
			s, _ := starts.Lookup(topic, o.Partition)
			out[o.Partition] = offsets{start: s.Offset, end: o.Offset}
		}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions (does it exist?)", topic)
	}
	return out, nil
}
