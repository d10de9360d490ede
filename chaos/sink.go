package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sink is one `doris-sink run` job of the campaign: its config files (one
// without and one with a dead-letter topic) and its data directory.
type Sink struct {
	// Name is job.name (the label prefix).
	Name string
	// Table is the target table in Database.
	Table string
	// DataDir is job.data_dir: checkpoint store and ledger.
	DataDir string
	// Config is the config file without a dead-letter topic; ConfigDLQ the
	// same job with records.dead_letter_topic set.
	Config, ConfigDLQ string
}

// SinkOptions are the delivery settings shared by a campaign's sinks.
type SinkOptions struct {
	// Guarantee is delivery.guarantee.
	Guarantee string
	// CheckpointInterval is delivery.checkpoint_interval (e.g. "200ms").
	CheckpointInterval string
	// CheckpointMaxRows is delivery.checkpoint_max_rows.
	CheckpointMaxRows int
	// Coordinator is job.coordinator; "" keeps the default (kafka).
	Coordinator string
	// TableHeader, when set, is routing.table_header: each record goes to
	// the table its header names.
	TableHeader string
	// Topics, when several, are kafka.topics (else kafka.topic is Topic).
	Topics []string
	// Format is records.format: "" (json), or FormatAvro or FormatProtobuf
	// with the Schema Registry at Registry.
	Format, Registry string
}

// NewSink writes the config files of job name loading table into dir.
func NewSink(dir, name, table string, c *Cluster, o SinkOptions) (*Sink, error) {
	s := &Sink{Name: name, Table: table, DataDir: filepath.Join(dir, name, "data"),
		Config: filepath.Join(dir, name, "job.yaml"), ConfigDLQ: filepath.Join(dir, name, "job-dlq.yaml")}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return nil, fmt.Errorf("sink %s: %w", name, err)
	}
	for path, dlq := range map[string]string{s.Config: "", s.ConfigDLQ: DeadLetterTopic} {
		var b strings.Builder
		if o.Coordinator != "" {
			fmt.Fprintf(&b, "job: { name: %s, data_dir: %s, coordinator: %s }\n", name, s.DataDir, o.Coordinator)
		} else {
			fmt.Fprintf(&b, "job: { name: %s, data_dir: %s }\n", name, s.DataDir)
		}
		if len(o.Topics) > 1 {
			fmt.Fprintf(&b, "kafka: { brokers: [%s], topics: [%s], group: chaos-%s, start: earliest }\n", c.Brokers(),
				strings.Join(o.Topics, ", "), name)
		} else {
			fmt.Fprintf(&b, "kafka: { brokers: [%s], topic: %s, group: chaos-%s, start: earliest }\n", c.Brokers(), Topic, name)
		}
		fmt.Fprintf(&b, "doris: { fe: [%s], mysql: %s, user: root, database: %s, table: %s, format: json }\n",
			c.Doris.FEURL(), c.Doris.MySQLAddr(), Database, table)
		fmt.Fprintf(&b, "delivery: { guarantee: %s, checkpoint_interval: %s, checkpoint_max_rows: %d }\n",
			o.Guarantee, o.CheckpointInterval, o.CheckpointMaxRows)
		records := "format: json"
		if isRegistryFormat(o.Format) {
			// max_wait 1s: a registry outage refuses within the campaign's
			// patience (the default 30 s would stall every such cycle).
			records = fmt.Sprintf("format: %s, schema_registry: { urls: [%s], max_wait: 1s }", o.Format, o.Registry)
		}
		if dlq != "" && o.Coordinator != "file" {
			fmt.Fprintf(&b, "records: { %s, dead_letter_topic: %s }\n", records, dlq)
		} else if dlq != "" {
			// Exactly-once dead letters need job.coordinator kafka.
			fmt.Fprintf(&b, "records: { %s, dead_letter_topic: %s, dead_letter_delivery: at_least_once }\n", records, dlq)
		} else {
			fmt.Fprintf(&b, "records: { %s }\n", records)
		}
		if o.TableHeader != "" {
			fmt.Fprintf(&b, "routing: { table_header: %s }\n", o.TableHeader)
		}
		b.WriteString("metrics: { listen: \"\" }\nlog: { format: json, level: info }\n")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			return nil, fmt.Errorf("sink %s: %w", name, err)
		}
	}
	return s, nil
}
