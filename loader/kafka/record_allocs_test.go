package kafka

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
)

// discardSink is a KeySink that keeps only counts: the record loop's own
// cost, without a loader behind it.
type discardSink struct{ rows, bytes int }

func (s *discardSink) Recover(context.Context) (json.RawMessage, error) { return nil, nil }
func (s *discardSink) SetStart(json.RawMessage) error                   { return nil }
func (s *discardSink) Healing() (uint64, json.RawMessage, bool)         { return 0, nil, false }
func (s *discardSink) Write(_ context.Context, row []byte) error {
	s.rows++
	s.bytes += len(row)
	return nil
}
func (s *discardSink) WriteKey(ctx context.Context, _ uint64, row []byte) error {
	return s.Write(ctx, row)
}
func (s *discardSink) WriteTo(ctx context.Context, _ string, row []byte) error {
	return s.Write(ctx, row)
}
func (s *discardSink) WriteToKey(ctx context.Context, _ string, _ uint64, row []byte) error {
	return s.Write(ctx, row)
}
func (s *discardSink) CheckpointWith(context.Context, json.RawMessage, loader.CheckpointInfo) error {
	return nil
}
func (s *discardSink) LastDecision() (uint64, string, bool) { return 0, "", false }
func (s *discardSink) CommitFailed() <-chan struct{}        { return nil }
func (s *discardSink) Close(context.Context) error          { return nil }

// recordLoop builds a Connector (format json, no metadata, no checkpoint
// trigger within the test) on a discardSink, and a fetched partition of n
// compact 1 KiB JSON records whose offsets handlePartition has not seen.
func recordLoop(t testing.TB, n int) (*Connector, *discardSink, func() *kgo.FetchPartition) {
	t.Helper()
	sink := &discardSink{}
	c, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Topic: testTopic, Group: "g", Format: FormatJSON,
		CheckpointInterval: time.Hour, PartitionRefresh: -1}, sink)
	if err != nil {
		t.Fatal(err)
	}
	c.next = topicOffsets{}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: testTopic, Partition: 0, Value: benchJSON1K}
	}
	var off int64
	return c, sink, func() *kgo.FetchPartition {
		for _, r := range recs {
			r.Offset = off
			off++
		}
		return &kgo.FetchPartition{Partition: 0, Records: recs}
	}
}

// TestRecordLoopAllocs: handing a fetched partition of passthrough JSON
// records to the sink allocates nothing per record (the record loop once
// allocated one errors.As target per record: 1.0 allocs/record in bench).
func TestRecordLoopAllocs(t *testing.T) {
	const n = 512
	c, sink, batch := recordLoop(t, n)
	ctx := context.Background()
	if err := c.handlePartition(ctx, testTopic, batch()); err != nil { // first batch: the timer, the maps
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		p := batch()
		if err := c.handlePartition(ctx, testTopic, p); err != nil {
			t.Fatal(err)
		}
	})
	if sink.rows != 22*n {
		t.Fatalf("sink got %d rows, want %d", sink.rows, 22*n)
	}
	if got := c.metrics.Records.Load(); got != 22*n {
		t.Fatalf("metrics count %d records, want %d", got, 22*n)
	}
	// The batch's FetchPartition itself is one allocation per batch.
	if perRecord := allocs / n; perRecord > 0.01 && !raceEnabled {
		t.Fatalf("%.3f allocs per record (%.0f per batch of %d), want 0", perRecord, allocs, n)
	}
}

// BenchmarkRecordLoop1K is the Connector's per-record cost on 1 KiB
// passthrough JSON (convert, checks, counters, the hand-off to the sink),
// without Kafka or a loader.
func BenchmarkRecordLoop1K(b *testing.B) {
	const n = 1024
	c, _, batch := recordLoop(b, n)
	ctx := context.Background()
	b.SetBytes(int64(n * len(benchJSON1K)))
	b.ReportAllocs()
	for b.Loop() {
		if err := c.handlePartition(ctx, testTopic, batch()); err != nil {
			b.Fatal(err)
		}
	}
}
