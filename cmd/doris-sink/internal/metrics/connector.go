package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// RegisterConnector exports the counters of a Kafka connector reading
// topic into table ("db.table"): records and bytes consumed, rows handed
// to the loader, checkpoints decided and failed, recovers, dead-lettered
// records, and the per-partition lag (high watermark minus the last
// record consumed).
func (m *Metrics) RegisterConnector(topic, table string, km *kafka.Metrics) error {
	labels := prometheus.Labels{"topic": topic, "table": table}
	counter := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v.Load()) })
	}
	cs := []prometheus.Collector{
		counter("doris_sink_records_consumed_total", "Kafka records consumed (re-reads after a rewind count again).", &km.Records),
		counter("doris_sink_record_bytes_consumed_total", "Value bytes of the records consumed.", &km.Bytes),
		counter("doris_sink_rows_written_total", "Rows handed to the loader.", &km.Rows),
		counter("doris_sink_checkpoints_total", "Checkpoints the connector saw decided.", &km.Checkpoints),
		counter("doris_sink_checkpoint_failures_total", "Checkpoints that failed (each followed by Recover and a rewind).", &km.CheckpointFailures),
		counter("doris_sink_recovers_total", "loader.Recover calls, the start included.", &km.Recovers),
		counter("doris_sink_dead_lettered_total", "Records sent to the dead-letter topic.", &km.DeadLettered),
		counter("doris_sink_unknown_fields_total", "JSON fields of rows that are not columns of the table (Doris ignores them).", &km.UnknownFields),
		&lagCollector{km: km, desc: prometheus.NewDesc("doris_sink_lag_records",
			"Records between the last one consumed and the partition's high watermark.", []string{"partition"}, labels)},
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// lagCollector reads kafka.Metrics.Lag at scrape time.
type lagCollector struct {
	km   *kafka.Metrics
	desc *prometheus.Desc
}

func (l *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *lagCollector) Collect(ch chan<- prometheus.Metric) {
	for p, lag := range l.km.Lag() {
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(lag), strconv.Itoa(int(p)))
	}
}
