package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// newBareConsumer is the bare franz-go consumer of the baseline and the
// limit line: the same fetch options as the Connector's consuming client
// (direct assignment from offset 0, fetch size, read-committed). It
// returns how many partitions have records to read.
func newBareConsumer(s spec) (*kgo.Client, int, error) {
	assign := map[int32]kgo.Offset{}
	left := 0
	for p, end := range s.End {
		assign[p] = kgo.NewOffset().At(0)
		if end > 0 {
			left++
		}
	}
	fetch := s.FetchMaxBytes
	if fetch <= 0 {
		fetch = kafka.DefaultFetchMaxBytes
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.Topic: assign}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(fetch),
		kgo.FetchMaxPartitionBytes(fetch), // as the Connector's client (loader/kafka/client.go)
		kgo.BrokerMaxReadBytes(100<<20),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return nil, 0, fmt.Errorf("kafka client: %w", err)
	}
	return cl, left, nil
}

// pollErr joins the errors of a poll, naming each topic-partition.
func pollErr(fs kgo.Fetches) error {
	var ferr error
	fs.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, fmt.Errorf("%s/%d: %w", t, p, err)) })
	return ferr
}

// runBaseline reads the topic with the bare consumer and discards every
// record, sampling the steady-state window after each poll.
func runBaseline(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	m, err := startMeter(s.CPUProfile)
	if err != nil {
		return res, err
	}
	cl, left, err := newBareConsumer(s)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	probe := newWindowProbe(s.TotalBytes)
	if err := m.watch(probe); err != nil {
		return res, err
	}
	for left > 0 {
		fs := cl.PollRecords(ctx, kafka.DefaultPollMaxRecords)
		if err := pollErr(fs); err != nil {
			return res, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			res.Records++
			res.Bytes += int64(len(r.Value))
			if r.Offset+1 == s.End[r.Partition] {
				left--
			}
		})
		if res.FirstRecord == 0 && res.Records > 0 {
			res.FirstRecord = time.Now().UnixNano()
		}
		probe.observe(res.Bytes, res.Records)
	}
	res.LastByte = time.Now().UnixNano()
	if err := m.stop(&res); err != nil {
		return res, err
	}
	res.Done = time.Now().UnixNano()
	res.Window = probe.result()
	return res, nil
}
