package checkpoint

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// --offsets takes topic:partition=offset, and partition=offset for the
// job's only topic.
func TestParseTopicOffsets(t *testing.T) {
	t.Parallel()
	m, err := ParseTopicOffsets("orders:0=5, items:0=7,items:1=2")
	if err != nil || m["orders"][0] != 5 || m["items"][0] != 7 || m["items"][1] != 2 || len(m) != 2 {
		t.Fatalf("ParseTopicOffsets = %v %v", m, err)
	}
	if m, err := ParseTopicOffsets("0=1,1=2"); err != nil || m[""][1] != 2 {
		t.Fatalf("one-topic form = %v %v", m, err)
	}
	for _, bad := range []string{":0=1", "a:x=1", "a:0=1,a:0=2", "a:0=-1"} {
		if _, err := ParseTopicOffsets(bad); err == nil {
			t.Errorf("ParseTopicOffsets(%q) accepted it", bad)
		}
	}
}

// rebaseState is a state whose last decision ended at end, committed.
func rebaseState(t *testing.T, cfg *config.Config, end map[string]map[int32]int64) *cp.State {
	t.Helper()
	st := cp.NewState(run.Owner(cfg))
	a, err := st.Announce(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := kafka.PositionOf(end).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	st.Decide(cp.Decision{ID: a.ID, Label: a.Label, TxnID: 9, End: raw, DecidedAt: time.Now(), Committed: true, CommittedAt: time.Now()})
	return st
}

// A rebase of a job reading several topics plans per topic: explicit
// offsets name their topic (a bare partition=offset is refused), a
// recreated topic moves all its partitions, and a topic removed from the
// configuration is dropped from the new position.
func TestPlanRebaseSeveralTopics(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Job: config.Job{Name: "j"}, Doris: config.Doris{Database: "db", Table: "t"},
		Kafka: config.Kafka{Topics: []string{"items", "orders"}}}
	logs := map[string]logBounds{
		"orders": {starts: map[int32]int64{0: 0, 1: 0}, ends: map[int32]int64{0: 10, 1: 10}},
		"items":  {starts: map[int32]int64{0: 0}, ends: map[int32]int64{0: 4}},
	}
	st := rebaseState(t, cfg, map[string]map[int32]int64{"orders": {0: 6, 1: 7}, "items": {0: 3}})
	req := RebaseRequest{TopicOffsets: map[string]map[int32]int64{"orders": {0: 2}}, Now: time.Now}
	res, d, err := planRebase(cfg, st, req, logs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"topics":{"items":{"0":3},"orders":{"0":2,"1":7}}}`; string(d.End) != want || res.Topic != "items,orders" {
		t.Fatalf("target %s (topic %s), want %s", d.End, res.Topic, want)
	}
	var refused *RebaseRefusedError
	req = RebaseRequest{Offsets: map[int32]int64{0: 2}, Now: time.Now}
	if _, _, err := planRebase(cfg, st, req, logs, nil); !errors.As(err, &refused) || !strings.Contains(err.Error(), "<topic>:") {
		t.Fatalf("bare --offsets with two topics: %v, want a refusal asking for topic:partition=offset", err)
	}
	req = RebaseRequest{To: RebaseEarliest, Now: time.Now}
	if _, d, err = planRebase(cfg, st, req, logs, map[string]bool{"items": true}); err != nil ||
		string(d.End) != `{"topics":{"items":{"0":0},"orders":{"0":6,"1":7}}}` {
		t.Fatalf("recreated items: %s %v", d.End, err)
	}
	if _, _, err := planRebase(cfg, st, req, logs, nil); !errors.As(err, &refused) {
		t.Fatalf("nothing to move: %v, want a refusal", err)
	}

	// items removed from kafka.topics: the rebase drops it.
	one := *cfg
	one.Kafka = config.Kafka{Topics: []string{"orders"}}
	st1 := rebaseState(t, &one, map[string]map[int32]int64{"orders": {0: 6, 1: 7}, "items": {0: 3}})
	delete(logs, "items")
	if _, d, err = planRebase(&one, st1, req, logs, nil); err != nil || string(d.End) != `{"topic":"orders","offsets":{"0":6,"1":7}}` {
		t.Fatalf("removed items: %s %v, want the position of orders only", d.End, err)
	}
}
