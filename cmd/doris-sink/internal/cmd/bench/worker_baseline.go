package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// runBaseline reads the topic with a bare franz-go consumer, the same fetch
// options as the Connector's consuming client (direct assignment, fetch
// size, read-committed), and discards every record.
func runBaseline(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	m, err := startMeter(s.CPUProfile)
	if err != nil {
		return res, err
	}
	assign := map[int32]kgo.Offset{}
	left := 0
	for p, end := range s.End {
		assign[p] = kgo.NewOffset().At(0)
		if end > 0 {
			left++
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.Topic: assign}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(kafka.DefaultFetchMaxBytes),
		kgo.BrokerMaxReadBytes(100<<20),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return res, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	for left > 0 {
		fs := cl.PollRecords(ctx, kafka.DefaultPollMaxRecords)
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, fmt.Errorf("%s/%d: %w", t, p, err)) })
		if ferr != nil {
			return res, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			res.Records++
			res.Bytes += int64(len(r.Value))
			if r.Offset+1 == s.End[r.Partition] {
				left--
			}
		})
	}
	m.stop(&res)
	return res, nil
}
