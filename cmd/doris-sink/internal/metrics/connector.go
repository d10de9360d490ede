package metrics

import (
	"strconv"

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
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
	}
	var cs []prometheus.Collector
	for _, cc := range connectorCounters {
		read := cc.read
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: cc.name, Help: cc.help, ConstLabels: labels},
			func() float64 { return float64(read(km)) }))
	}
	cs = append(cs,
		&reasonCollector{km: km, desc: prometheus.NewDesc("doris_sink_dead_lettered_by_reason_total",
			helpDeadLetteredByReason, []string{"reason"}, labels)},
		&lagCollector{lag: km.TopicLag, desc: prometheus.NewDesc("doris_sink_lag_records",
			helpLag, []string{"topic", "partition"}, lagLabels)},
		&lagCollector{lag: func() map[string]map[int32]int64 { return loadedLag(m.positions(table)) }, desc: prometheus.NewDesc("doris_sink_lag_loaded_records",
			helpLoadedLag, []string{"topic", "partition"}, lagLabels)},
		gauge("doris_sink_stalled", helpStalled,
			func() float64 {
				if km.Stall().Reason != "" {
					return 1
				}
				return 0
			}),
		gauge("doris_sink_stalled_seconds", helpStalledSeconds,
			func() float64 {
				s := km.Stall()
				if s.Reason == "" {
					return 0
				}
				return max(m.now().Sub(s.Since).Seconds(), 0)
			}),
	)
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
