// Package config loads and validates the doris-sink configuration
// (docs/design.md §1): built-in defaults that are safe for exactly-once, then a
// YAML file, then DORIS_SINK_* environment variables, then command-line
// flags. Keys are the stable names of docs/design.md §1 plus the connector's
// own; the Doris Flink connector's and the Doris Kafka connector's option
// names are accepted as aliases in the YAML file and the environment
// (aliases.go, kcaliases.go, docs/configuration.md).
//
// Validation happens once, in Load: every error names the key, the bad
// value and what is allowed.
package config

import (
	"strings"
	"time"
)

// Guarantee values of delivery.guarantee (docs/design.md §4).
const (
	ExactlyOnce = "exactly-once"
	AtLeastOnce = "at-least-once"
)

// Record formats of records.format (docs/design.md §5).
const (
	RecordsJSON     = "json"
	RecordsCSV      = "csv"
	RecordsDebezium = "debezium"
)

// Start modes of kafka.start; StartExplicit is set when kafka.start is a
// partition → offset map.
const (
	StartEarliest  = "earliest"
	StartLatest    = "latest"
	StartCommitted = "committed"
	StartExplicit  = "explicit"
)

// Config is the whole doris-sink configuration. Field JSON names are the
// config keys, so a JSON dump (Redacted) reads like the YAML file.
type Config struct {
	Job      Job      `json:"job"`
	Kafka    Kafka    `json:"kafka"`
	Doris    Doris    `json:"doris"`
	Delivery Delivery `json:"delivery"`
	Records  Records  `json:"records"`
	Routing  Routing  `json:"routing"`
	// Tables are the per-table overrides (tables.<table or pattern>.*).
	Tables  map[string]TableOverride `json:"tables,omitempty"`
	Metrics Metrics                  `json:"metrics"`
	Log     Log                      `json:"log"`

	// Warnings lists accepted-but-ignored keys (Flink options with no
	// doris-sink equivalent) and security warnings (secret files readable
	// by others, SASL PLAIN without TLS) for the caller to print.
	Warnings []string `json:"-"`
}

// Job is the job identity.
type Job struct {
	// Name is the label prefix (job.name); required.
	Name string `json:"name"`
	// DataDir holds the checkpoint store and the ledger (job.data_dir).
	// Default ./var/<job.name>.
	DataDir string `json:"data_dir"`
	// Coordinator is where run keeps the commit decisions
	// (job.coordinator): CoordinatorKafka (default) or CoordinatorFile.
	Coordinator string `json:"coordinator"`
	// Slots is the number of writer slots (job.slots, default 1): 1 runs
	// the job in one process; N ≥ 2 is group mode, the processes of one
	// job config share the N slots through the consumer group.
	Slots int `json:"slots"`
	// Instance is the static group membership id of this process
	// (job.instance, group mode); "" for none.
	Instance string `json:"instance,omitempty"`
}

// MaxSlots bounds job.slots.
const MaxSlots = 1000

// Coordinators of job.coordinator.
const (
	// CoordinatorFile keeps the decisions in the checkpoint file in
	// job.data_dir (one process per data dir, file lock).
	CoordinatorFile = "file"
	// CoordinatorKafka keeps them in the job's compacted Kafka state topic,
	// written in Kafka transactions fenced by the producer epoch
	// (loader/kafka/coordlog); job.data_dir holds only the ledger.
	CoordinatorKafka = "kafka"
)

// Kafka is the source.
type Kafka struct {
	Brokers []string `json:"brokers"`
	Topic   string   `json:"topic"`
	// Topics are several source topics (kafka.topics); TopicRegex selects
	// them by name (kafka.topic_regex). Exactly one of Topic, Topics and
	// TopicRegex is set (SourceTopics).
	Topics     []string `json:"topics,omitempty"`
	TopicRegex string   `json:"topic_regex,omitempty"`
	// Group defaults to doris-sink-<job.name>.
	Group string `json:"group"`
	Start Start  `json:"start"`
	TLS   TLS    `json:"tls"`
	SASL  SASL   `json:"sasl"`

	// SessionTimeout and RebalanceTimeout are the group-mode membership
	// timeouts (kafka.session_timeout, kafka.rebalance_timeout).
	SessionTimeout   time.Duration `json:"session_timeout"`
	RebalanceTimeout time.Duration `json:"rebalance_timeout"`
	// MaxDecompressedBatchBytes bounds one fetched batch decompressed
	// (kafka.max_decompressed_batch_bytes).
	MaxDecompressedBatchBytes int64 `json:"max_decompressed_batch_bytes"`
}

// Start is where a job with no decided checkpoint starts reading.
type Start struct {
	// Mode is earliest, latest, committed or explicit.
	Mode string `json:"mode"`
	// Offsets maps partition → offset when Mode is explicit.
	Offsets map[int32]int64 `json:"offsets,omitempty"`
}

// TLS configures a TLS connection to the brokers; Enabled is implied by
// any of the other fields.
type TLS struct {
	Enabled bool   `json:"enabled"`
	CAFile  string `json:"ca_file,omitempty"`
	// CertFile and KeyFile are the PEM client certificate and its key
	// (mutual TLS); both or neither.
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
	// ServerName overrides the name the brokers' certificates are verified
	// against (and sent as SNI); empty: each broker's host.
	ServerName string `json:"server_name,omitempty"`
}

// SASL configures Kafka authentication. Mechanism "" means none.
type SASL struct {
	// Mechanism is plain, scram-sha-256 or scram-sha-512.
	Mechanism    string `json:"mechanism,omitempty"`
	User         string `json:"user,omitempty"`
	Password     Secret `json:"password,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
}

// Doris is the target.
type Doris struct {
	// FE lists FE HTTP base URLs ("http://host:8030").
	FE []string `json:"fe"`
	// BE optionally lists BE HTTP base URLs for direct Stream Load.
	BE []string `json:"be,omitempty"`
	// MySQL is the FE MySQL protocol address host:port.
	MySQL        string `json:"mysql"`
	User         string `json:"user"`
	Password     Secret `json:"password"`
	PasswordFile string `json:"password_file,omitempty"`
	Database     string `json:"database"`
	Table        string `json:"table"`
	// Format is the Stream Load format, json or csv; by default derived
	// from records.format.
	Format string `json:"format"`
	// FormatSet: doris.format was set by a source (file, environment,
	// flag), not derived; `doris-sink load` then reads its files in it.
	FormatSet bool `json:"-"`
	// Properties are raw Stream Load headers.
	Properties map[string]string `json:"properties,omitempty"`
	TLS        DorisTLS          `json:"tls"`
	// MySQLTLS is required, preferred or off; "" (the default) means
	// required when doris.tls.* is set, off otherwise (doris.Config.MySQLTLS).
	MySQLTLS string `json:"mysql_tls,omitempty"`
	// MySQLAllowInsecureAuth lets the password cross a plaintext MySQL
	// connection (cleartext or RSA with a server-sent key).
	MySQLAllowInsecureAuth bool `json:"mysql_allow_insecure_auth,omitempty"`
	// RedirectAllowHosts are extra hosts a 307 may send credentials to ("*":
	// any).
	RedirectAllowHosts []string `json:"redirect_allow_hosts,omitempty"`
	// RedirectAllowHTTP lets an https request follow a redirect to http.
	RedirectAllowHTTP bool `json:"redirect_allow_http,omitempty"`
	// SubLoads is the sub-load count K per table per checkpoint
	// (doris.sub_loads, loader.Config.SubLoads): a record goes to sub-load
	// partition mod K.
	SubLoads int `json:"sub_loads"`
	// SubLoadsAuto is doris.sub_loads: auto (loader.Config.SubLoadsAuto):
	// K from measured throughput, starting at SubLoads (1).
	SubLoadsAuto bool `json:"sub_loads_auto,omitempty"`
	// SubLoadsMax caps K under SubLoadsAuto (doris.sub_loads_max).
	SubLoadsMax int `json:"sub_loads_max"`
	// BESpread is fe or backends (doris.be_spread, doris.Config.BESpread).
	BESpread string `json:"be_spread"`
	// CreateTable creates a missing table from the records' Debezium
	// schema (doris.create_table*).
	CreateTable CreateTable `json:"create_table"`
}

// DorisTLS configures https and MySQL TLS to Doris.
type DorisTLS struct {
	CAFile string `json:"ca_file,omitempty"`
}

// Configured reports whether any doris.tls.* key is set (MySQL then
// defaults to TLS required).
func (t DorisTLS) Configured() bool { return t.CAFile != "" }

// Delivery is the guarantee and checkpoint triggers.
type Delivery struct {
	Guarantee          string        `json:"guarantee"`
	CheckpointInterval time.Duration `json:"checkpoint_interval"`
	CheckpointMaxBytes ByteSize      `json:"checkpoint_max_bytes"`
	// CheckpointMaxRows is a row cap per checkpoint; 0 means none.
	CheckpointMaxRows int64 `json:"checkpoint_max_rows"`
	BatchMode         bool  `json:"batch_mode"`
	// FailFastAfter is how long a failure that retrying cannot fix may
	// persist before run exits (delivery.fail_fast_after).
	FailFastAfter time.Duration `json:"fail_fast_after"`
	// RetryBackoffMax caps the backoff between retries of a failing
	// checkpoint (delivery.retry_backoff_max).
	RetryBackoffMax time.Duration `json:"retry_backoff_max"`
}

// Records is the record → row conversion.
type Records struct {
	Format string `json:"format"`
	// MetadataColumns maps a Kafka metadata field (topic, partition,
	// offset, timestamp) to the column that receives it.
	MetadataColumns map[string]string `json:"metadata_columns,omitempty"`
	// DeadLetterTopic receives records that cannot be converted; empty
	// means such a record fails the checkpoint.
	DeadLetterTopic string `json:"dead_letter_topic,omitempty"`
	// DeadLetterDelivery is DeadLetterExactlyOnce (default; needs
	// job.coordinator kafka) or DeadLetterAtLeastOnce.
	DeadLetterDelivery string `json:"dead_letter_delivery,omitempty"`
	// DeadLetterCreate creates a missing dead-letter topic at start.
	DeadLetterCreate bool `json:"dead_letter_create,omitempty"`
	// DeadLetterBufferBytes bounds one checkpoint's staged dead letters.
	DeadLetterBufferBytes int64 `json:"dead_letter_buffer_bytes,omitempty"`
	// DeadLetterMaxBisectLoads bounds the refused loads spent bisecting a
	// range Doris refuses; 0 turns bisection off.
	DeadLetterMaxBisectLoads int `json:"dead_letter_max_bisect_loads"`
	// Delete marks json records as deletes (records.delete.*).
	Delete Delete `json:"delete"`
	// SchemaEvolution is none or add_columns (records.schema_evolution).
	SchemaEvolution string `json:"schema_evolution"`
	// MaxRowBytes bounds one decoded row's JSON (records.max_row_bytes,
	// registry formats).
	MaxRowBytes int64 `json:"max_row_bytes,omitempty"`
	// MaxKeyBytes and MaxHeadersBytes bound one record's key and headers
	// (records.max_key_bytes, records.max_headers_bytes).
	MaxKeyBytes     int64 `json:"max_key_bytes,omitempty"`
	MaxHeadersBytes int64 `json:"max_headers_bytes,omitempty"`
	// Envelope is "" or debezium (records.envelope, registry formats).
	Envelope string `json:"envelope,omitempty"`
	// TimeZoneName is records.time_zone: the zone timestamps of the
	// registry formats are rendered in (default UTC); see TimeZone.
	TimeZoneName string `json:"time_zone,omitempty"`
	// SchemaRegistry is records.schema_registry.*.
	SchemaRegistry SchemaRegistry `json:"schema_registry"`
	// JSONSchema is records.json_schema.* (records.format json_schema).
	JSONSchema JSONSchemaRecords `json:"json_schema"`
}

// Routing picks each record's target table (routing.*, loader/kafka
// Routing): first match wins, in the order of the fields. All empty: every
// record goes to doris.table.
type Routing struct {
	// TopicTables maps a topic to its table (routing.topic_tables).
	TopicTables map[string]string `json:"topic_tables,omitempty"`
	// TableField is a top-level JSON field naming the table.
	TableField string `json:"table_field,omitempty"`
	// TableHeader is a record header naming the table.
	TableHeader string `json:"table_header,omitempty"`
	// DebeziumTemplate builds the table from source.db and source.table,
	// e.g. "{db}_{table}" (sanitised to a Doris name).
	DebeziumTemplate string `json:"debezium_template,omitempty"`
	// DefaultTable receives the records no other rule routes; empty: such
	// a record is a dead letter (records.dead_letter_topic) or stops run.
	DefaultTable string `json:"default_table,omitempty"`
}

// Active reports whether any routing rule is set (the job may load
// several tables).
func (r Routing) Active() bool {
	return len(r.TopicTables) > 0 || r.TableField != "" || r.TableHeader != "" ||
		r.DebeziumTemplate != "" || r.DefaultTable != ""
}

// Values of records.dead_letter_delivery.
const (
	// DeadLetterExactlyOnce produces a checkpoint's dead letters in the
	// Kafka transaction of its decision (job.coordinator kafka).
	DeadLetterExactlyOnce = "exactly_once"
	// DeadLetterAtLeastOnce produces each dead letter as it is read.
	DeadLetterAtLeastOnce = "at_least_once"
)

// Metrics is the Prometheus endpoint.
type Metrics struct {
	// Listen is host:port; empty disables the endpoint.
	Listen string `json:"listen"`
	// LogInterval is the period of run's progress line; 0 disables it.
	LogInterval time.Duration `json:"log_interval"`
}

// Log configures log/slog.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `json:"level"`
	// Format is text or json.
	Format string `json:"format"`
}

// SourceTopics returns the configured source topics: kafka.topic, or
// kafka.topics (nil with kafka.topic_regex).
func (k Kafka) SourceTopics() []string {
	if k.Topic != "" {
		return []string{k.Topic}
	}
	return k.Topics
}

// OneTopic returns the only source topic of a job reading one (kafka.topic,
// or kafka.topics of one), ok false otherwise.
func (k Kafka) OneTopic() (string, bool) {
	if ts := k.SourceTopics(); len(ts) == 1 && k.TopicRegex == "" {
		return ts[0], true
	}
	return "", false
}

// DescribeTopics names the source for messages: the topic, the topics
// joined by ",", or "regex <re>".
func (k Kafka) DescribeTopics() string {
	if k.TopicRegex != "" {
		return "regex " + k.TopicRegex
	}
	return strings.Join(k.SourceTopics(), ",")
}
