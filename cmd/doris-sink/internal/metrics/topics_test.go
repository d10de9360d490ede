package metrics

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// A job reading several topics exports its lag per topic partition (the
// "topic" label is the partition's topic) and lists /status partitions
// with their topic.
func TestLagPerTopicPartition(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	m, _, _ := newTestMetrics(t, clk)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	m.updateJob("db.t", func(j *job) {
		j.positions = func() map[string]map[int32]kafka.PartitionPosition {
			return map[string]map[int32]kafka.PartitionPosition{
				"a": {0: {HighWatermark: 9, Read: 9, Loaded: 2}},
				"b": {0: {HighWatermark: 4, Read: 4, Loaded: 4}},
			}
		}
	})
	_, metrics := get(t, srv, "/metrics")
	for _, want := range []string{
		`doris_sink_lag_loaded_records{partition="0",table="db.t",topic="a"} 7`,
		`doris_sink_lag_loaded_records{partition="0",table="db.t",topic="b"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	_, body := get(t, srv, "/status")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || len(st.Jobs) != 1 {
		t.Fatalf("/status %q: %v", body, err)
	}
	ps := st.Jobs[0].Partitions
	if len(ps) != 2 || ps[0].Topic != "a" || *ps[0].Lag != 7 || ps[1].Topic != "b" || *ps[1].Lag != 0 {
		t.Fatalf("partitions %+v, want a/0 lag 7 and b/0 lag 0", ps)
	}
}
