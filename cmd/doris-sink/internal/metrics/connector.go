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
// records, the per-partition lag to the records read and to the records
// loaded, and whether the connector is stalled (kafka.Metrics.Stall). The
// connector's stall also drives /readyz, and its positions /status.
func (m *Metrics) RegisterConnector(topic, table string, km *kafka.Metrics) error {
	labels := prometheus.Labels{"topic": topic, "table": table}
	// The lag is per topic partition: "topic" is a variable label there
	// (the same series as before for a job of one topic).
	lagLabels := prometheus.Labels{"table": table}
	counter := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v.Load()) })
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
	}
	cs := []prometheus.Collector{
		counter("doris_sink_records_consumed_total", "Kafka records consumed (re-reads after a rewind count again).", &km.Records),
		counter("doris_sink_record_bytes_consumed_total", "Value bytes of the records consumed.", &km.Bytes),
		counter("doris_sink_rows_written_total", "Rows handed to the loader.", &km.Rows),
		counter("doris_sink_checkpoints_total", "Checkpoints the connector saw decided.", &km.Checkpoints),
		counter("doris_sink_checkpoint_failures_total", "Checkpoints that failed (each followed by Recover and a rewind).", &km.CheckpointFailures),
		counter("doris_sink_recovers_total", "loader.Recover calls, the start included.", &km.Recovers),
		counter("doris_sink_dead_lettered_total", "Records sent to the dead-letter topic.", &km.DeadLettered),
		&reasonCollector{km: km, desc: prometheus.NewDesc("doris_sink_dead_lettered_by_reason_total",
			"Records sent to the dead-letter topic, per reason (convert: the record cannot be converted).",
			[]string{"reason"}, labels)},
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "doris_sink_dead_letters_truncated_total",
			Help: "Dead letters whose value was truncated to the dead-letter topic's max.message.bytes.", ConstLabels: labels},
			func() float64 { return float64(km.DeadLettersTruncated()) }),
		counter("doris_sink_unknown_fields_total", "JSON fields of rows that are not columns of the table (Doris ignores them).", &km.UnknownFields),
		counter("doris_sink_table_changes_total", "Changes the sink made to its table: created (doris.create_table), ALTER TABLE (records.schema_evolution).", &km.TableChanges),
		&lagCollector{lag: km.TopicLag, desc: prometheus.NewDesc("doris_sink_lag_records",
			"Records between the last one read (not loaded: see doris_sink_lag_loaded_records) and the partition's high watermark at the last fetch.",
			[]string{"topic", "partition"}, lagLabels)},
		&lagCollector{lag: func() map[string]map[int32]int64 { return loadedLag(m.positions(table)) }, desc: prometheus.NewDesc("doris_sink_lag_loaded_records",
			"Records between the end of the last decided checkpoint (loaded, or committed right after) and the partition's high watermark at the last fetch.",
			[]string{"topic", "partition"}, lagLabels)},
		gauge("doris_sink_stalled", "1 while the connector cannot make progress (a failure it retries or one it stops on), 0 otherwise.",
			func() float64 {
				if km.Stall().Reason != "" {
					return 1
				}
				return 0
			}),
		gauge("doris_sink_stalled_seconds", "Seconds since the current stall began (its first failure); 0 when not stalled.",
			func() float64 {
				s := km.Stall()
				if s.Reason == "" {
					return 0
				}
				return max(m.now().Sub(s.Since).Seconds(), 0)
			}),
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	m.updateJob(table, func(j *job) { j.topic, j.km, j.positions = topic, km, km.TopicPositions })
	return nil
}

// lagCollector reads a per-partition lag (kafka.Metrics.Lag or LoadedLag)
// at scrape time.
type lagCollector struct {
	lag  func() map[string]map[int32]int64
	desc *prometheus.Desc
}

func (l *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *lagCollector) Collect(ch chan<- prometheus.Metric) {
	for t, parts := range l.lag() {
		for p, lag := range parts {
			ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(lag), t, strconv.Itoa(int(p)))
		}
	}
}

// reasonCollector reads the per-reason dead-letter counts
// (kafka.Metrics.DeadLetteredByReason) at scrape time.
type reasonCollector struct {
	km   *kafka.Metrics
	desc *prometheus.Desc
}

func (r *reasonCollector) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r *reasonCollector) Collect(ch chan<- prometheus.Metric) {
	for reason, n := range r.km.DeadLetteredByReason() {
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.CounterValue, float64(n), string(reason))
	}
}
