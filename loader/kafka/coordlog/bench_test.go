package coordlog

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// BenchmarkStoreSave measures one Save (one Kafka transaction: produce the
// state record, AddOffsetsToTxn, TxnOffsetCommit of 2 partitions, EndTxn)
// against an in-process kfake broker. Run it short: -benchtime=200x.
func BenchmarkStoreSave(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := OpenStore(ctx, storeConfig(c, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st, err := s.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		a, err := st.Announce(time.Now())
		if err != nil {
			b.Fatal(err)
		}
		end, _ := kafka.Position{Topic: "orders", Offsets: map[int32]int64{0: int64(i), 1: int64(i)}}.MarshalJSON()
		st.Decide(checkpoint.Decision{ID: a.ID, Label: a.Label, TxnID: int64(i + 1), End: end, DecidedAt: time.Now()})
		if err := s.Save(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
}
