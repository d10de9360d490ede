package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// exportedNames are the metric names `doris-sink run` can export,
// standalone and in group mode: the collectors' descriptors (an
// unobserved *Vec is absent from Gather), histograms with their
// _bucket/_sum/_count series.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	describe := func(c prometheus.Collector) {
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fq.FindStringSubmatch(d.String()); m != nil {
				names[m[1]] = true
			}
		}
	}
	histogram := func(name string) {
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			names[name+s] = true
		}
	}
	standalone := New()
	if err := standalone.RegisterConnector("orders", "db.t", &kafka.Metrics{}); err != nil {
		t.Fatal(err)
	}
	group := NewGroup(4, "orders", "db.t")
	for _, m := range []*Metrics{standalone, group} {
		for _, c := range []prometheus.Collector{m.rows, m.rowsCommit, m.bytes, m.checkpoints, m.txns, m.stages} {
			describe(c)
		}
		families, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			names[f.GetName()] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				histogram(f.GetName())
			}
		}
	}
	describe(group.group)
	histogram("doris_sink_stage_seconds")
	return names
}

// Issue 21: the example Grafana dashboard and Prometheus rules name only
// metrics the binary exports.
func TestDashboardNamesExist(t *testing.T) {
	names := exportedNames(t)
	if !names["doris_sink_lag_loaded_records"] || !names["doris_sink_slot_owned"] || !names["doris_sink_stage_seconds_bucket"] {
		t.Fatalf("the enumeration misses known metrics: %v", names)
	}
	dir := filepath.Join("..", "..", "..", "..", "examples", "grafana")
	metric := regexp.MustCompile(`\bdoris_sink_[a-z0-9_]+`)
	for _, f := range []string{"doris-sink.json", "doris-sink-alerts.yml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(f) == ".json" && !json.Valid(b) {
			t.Errorf("%s is not valid JSON", f)
		}
		used := slices.Compact(slices.Sorted(slices.Values(metric.FindAllString(string(b), -1))))
		if len(used) < 5 {
			t.Errorf("%s names only %v", f, used)
		}
		for _, n := range used {
			if !names[n] {
				t.Errorf("%s names %s, which doris-sink does not export", f, n)
			}
		}
	}
}
