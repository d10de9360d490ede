package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// topicsKafka holds high watermarks per topic.
type topicsKafka struct {
	hw map[string]map[int32]int64
}

func (k *topicsKafka) HighWatermarks(_ context.Context, topic string) (map[int32]int64, error) {
	return k.hw[topic], nil
}

func (k *topicsKafka) CountRange(_ context.Context, _ string, _ int32, start, end int64) (RangeCount, error) {
	return RangeCount{Records: end - start}, nil
}

// committedAt is committed with topic-qualified positions.
func committedAt(id uint64, start, end map[string]map[int32]int64, rows int64) []ledger.Entry {
	enc := func(m map[string]map[int32]int64) string {
		if m == nil {
			return "null"
		}
		return kafka.PositionOf(m).String()
	}
	lbl := fmt.Sprintf("job:demo.t:0:%d", id)
	rg := []byte(`{"start":` + enc(start) + `,"end":` + enc(end) + `}`)
	return []ledger.Entry{
		{Event: ledger.EventDecided, Checkpoint: id, Label: lbl, TxnID: int64(100 + id), Ranges: rg,
			RowsTotal: rows, RowsLoaded: rows},
		{Event: ledger.EventCommitted, Checkpoint: id, Label: lbl, TxnID: int64(100 + id), Ranges: rg, State: "VISIBLE"},
	}
}

// verify reconciles checkpoints of several topics per topic: offsets are
// summed over the topics, a topic new in a checkpoint (kafka.topic_regex)
// starts at 0, the high watermarks and record counts are asked per topic,
// and a gap names its topic.
func TestReconcileSeveralTopics(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committedAt(1, nil, map[string]map[int32]int64{"a": {0: 10}}, 10)...)
	es = append(es, committedAt(2, map[string]map[int32]int64{"a": {0: 10}},
		map[string]map[int32]int64{"a": {0: 14}, "b": {0: 3, 1: 2}}, 9)...)
	k := &topicsKafka{hw: map[string]map[int32]int64{"a": {0: 14}, "b": {0: 3, 1: 2}}}
	rep := Reconcile(t.Context(), input(es, visible(1, 2), k))
	if err := rep.Err(); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("two topics: %v; findings %v", err, rep.Findings)
	}
	if rep.Offsets != 19 || rep.RowsLoaded != 19 || rep.Topic != "a" {
		t.Errorf("offsets %d rows %d topic %q, want 19, 19 and a (the first checkpoint's)", rep.Offsets, rep.RowsLoaded, rep.Topic)
	}

	// Checkpoint 3 does not resume topic b: a gap naming b.
	es = append(es, committedAt(3, map[string]map[int32]int64{"a": {0: 14}, "b": {0: 1, 1: 2}},
		map[string]map[int32]int64{"a": {0: 14}, "b": {0: 3, 1: 2}}, 2)...)
	rep = Reconcile(t.Context(), input(es, visible(1, 2, 3), k))
	found := false
	for _, f := range rep.Findings {
		if f.Kind == KindOverlap && strings.Contains(f.Message, "topic b partition 0") {
			found = true
		}
	}
	if !found {
		t.Fatalf("findings %v, want an overlap naming topic b partition 0", rep.Findings)
	}
	// A high watermark beyond a topic's end names it.
	k.hw["b"] = map[int32]int64{0: 2, 1: 2}
	rep = Reconcile(t.Context(), input(es[:4], visible(1, 2), k))
	found = false
	for _, f := range rep.Findings {
		if f.Kind == KindHighWatermark && strings.Contains(f.Message, "topic b partition 0 ends at 3") {
			found = true
		}
	}
	if !found {
		t.Fatalf("findings %v, want a high-watermark error naming topic b partition 0", rep.Findings)
	}
}
