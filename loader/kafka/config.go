package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"
)

// First-start modes (kafka.start): where to read when the loader has no
// decided position yet. After the first decided checkpoint the position
// always comes from the loader.
const (
	// StartEarliest reads every partition from its earliest offset (the
	// default).
	StartEarliest = "earliest"
	// StartLatest reads only records produced after the start (each
	// partition's end offset at start). A crash before the first
	// checkpoint is decided starts at the then-latest offsets again.
	StartLatest = "latest"
	// StartCommitted reads from the consumer group's committed offsets
	// (kadm.FetchOffsets of Config.Group); partitions without a committed
	// offset start at the earliest offset.
	StartCommitted = "committed"
	// StartOffsets reads from Config.StartOffsets; partitions not listed
	// there start at the earliest offset.
	StartOffsets = "offsets"
)

// Defaults of Config fields.
const (
	DefaultCheckpointInterval = 10 * time.Second
	DefaultCheckpointMaxBytes = 256 << 20
	DefaultFetchMaxBytes      = 16 << 20
	DefaultPollMaxRecords     = 10000
	DefaultPartitionRefresh   = time.Minute
)

// SASL mechanisms (kafka.sasl.mechanism).
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// SASL configures SASL authentication. The zero value means none.
type SASL struct {
	// Mechanism is SASLPlain, SASLScramSHA256 or SASLScramSHA512; ""
	// disables SASL.
	Mechanism string
	// User and Password are the credentials.
	User, Password string
}

// Config configures a Connector. Brokers and Topic are required; every
// other zero field means the documented default.
type Config struct {
	// Brokers are the seed brokers, "host:port" (kafka.brokers). Required.
	Brokers []string
	// Topic is the topic to load (kafka.topic). Required.
	Topic string
	// Group is the consumer group (kafka.group) that receives the decided
	// offsets after each checkpoint, for monitoring, and that StartCommitted
	// reads. The Connector never joins it. Empty: no commits.
	Group string
	// Start is the first-start mode (kafka.start): StartEarliest (default),
	// StartLatest, StartCommitted or StartOffsets.
	Start string
	// StartOffsets are the per-partition offsets of StartOffsets
	// (kafka.start_offsets); only valid with it.
	StartOffsets map[int32]int64
	// Format is the record format (kafka.format): FormatJSON (default),
	// FormatCSV or FormatDebezium. The loader's format must be
	// LoaderFormat(Format) and its properties must include
	// RequiredProperties(Format).
	Format string
	// Metadata adds Kafka metadata columns to JSON rows
	// (kafka.metadata_columns).
	Metadata MetadataColumns
	// Delete makes FormatJSON records delete rows (records.delete.*); the
	// loader's properties must then include DeleteProperties(Delete).
	Delete DeleteConfig
	// Routing picks each record's table (routing.*); the zero value sends
	// every record to the sink's table. With a rule set the sink must be a
	// TableSink (loader.Loader is).
	Routing Routing
	// Schemas decodes FormatAvro, FormatProtobuf and FormatJSONSchema
	// records (records.schema_registry; a *registry.Client). Required with
	// them.
	Schemas SchemaDecoder
	// Envelope is EnvelopeDebezium for Debezium change events in a
	// registry format (records.envelope); the loader's properties must then
	// include EnvelopeProperties(Envelope).
	Envelope string
	// DeadLetterTopic receives the records that cannot be converted
	// (records.dead_letter_topic). With a DeadLetterStager
	// (WithDeadLetterStager, job.coordinator kafka) a checkpoint's dead
	// letters are produced in the transaction that decides it, exactly
	// once; with DeadLetterAtLeastOnce each is produced and acknowledged
	// before the checkpoint that skips it is decided (a rewind produces it
	// again). The topic must exist (or DeadLetterCreate) and be writable:
	// Run checks it before reading. Empty: such a record fails the run
	// with a *RecordError.
	DeadLetterTopic string
	// DeadLetterAtLeastOnce allows a dead-letter topic without a
	// DeadLetterStager (records.dead_letter_delivery: at_least_once).
	DeadLetterAtLeastOnce bool
	// DeadLetterCreate creates a missing dead-letter topic at start, with
	// Topic's partition count (records.dead_letter_create).
	DeadLetterCreate bool
	// DeadLetterBufferBytes bounds the dead letters staged for one
	// checkpoint (key, value and headers): reaching it ends the checkpoint
	// (records.dead_letter_buffer_bytes). Default
	// DefaultDeadLetterBufferBytes.
	DeadLetterBufferBytes int64
	// BisectMaxFailures bounds the refused loads spent finding the rows
	// Doris refuses in one range (with a dead-letter topic): each burns a
	// label and an aborted transaction; about log2(rows) are needed per
	// refused row. When it is spent Run stops with a *RejectedError
	// (records.dead_letter_max_bisect_loads). Default
	// DefaultBisectMaxFailures; negative: no bisection.
	BisectMaxFailures int
	// CheckpointInterval bounds the time from the first record of a
	// checkpoint to its barrier (delivery.checkpoint_interval). Default
	// DefaultCheckpointInterval.
	CheckpointInterval time.Duration
	// CheckpointMaxBytes ends a checkpoint when its rows reach this many
	// bytes (delivery.checkpoint_max_bytes). Default
	// DefaultCheckpointMaxBytes; negative: no byte cap.
	CheckpointMaxBytes int64
	// CheckpointMaxRows ends a checkpoint when it has this many rows
	// (delivery.checkpoint_max_rows). Zero: no row cap.
	CheckpointMaxRows int64
	// TLS enables TLS to the brokers (nil: plaintext).
	TLS *tls.Config
	// SASL enables SASL authentication.
	SASL SASL
	// FetchMaxBytes bounds one fetch response (kgo.FetchMaxBytes); with one
	// buffered fetch per broker it bounds the consumer's memory. Default
	// DefaultFetchMaxBytes.
	FetchMaxBytes int32
	// PollMaxRecords bounds the records taken per poll. Default
	// DefaultPollMaxRecords.
	PollMaxRecords int
	// PartitionRefresh is how often the topic's partition count is checked
	// for new partitions (read from their earliest offset). Default
	// DefaultPartitionRefresh; negative disables the check.
	PartitionRefresh time.Duration
	// ClientID is the Kafka client id. Default "doris-sink".
	ClientID string
}

func (c *Config) applyDefaults() {
	if c.Start == "" {
		c.Start = StartEarliest
	}
	if c.Format == "" {
		c.Format = FormatJSON
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = DefaultCheckpointInterval
	}
	if c.CheckpointMaxBytes == 0 {
		c.CheckpointMaxBytes = DefaultCheckpointMaxBytes
	}
	if c.FetchMaxBytes == 0 {
		c.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if c.PollMaxRecords == 0 {
		c.PollMaxRecords = DefaultPollMaxRecords
	}
	if c.PartitionRefresh == 0 {
		c.PartitionRefresh = DefaultPartitionRefresh
	}
	if c.ClientID == "" {
		c.ClientID = "doris-sink"
	}
	if c.BisectMaxFailures == 0 {
		c.BisectMaxFailures = DefaultBisectMaxFailures
	}
	if c.DeadLetterBufferBytes == 0 {
		c.DeadLetterBufferBytes = DefaultDeadLetterBufferBytes
	}
}

// validate checks the config once; errors name the config keys.
func (c *Config) validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("kafka.brokers is required"))
	}
	if c.Topic == "" {
		errs = append(errs, errors.New("kafka.topic is required"))
	}
	if c.DeadLetterTopic != "" && c.DeadLetterTopic == c.Topic {
		errs = append(errs, fmt.Errorf("kafka.dead_letter_topic %q is kafka.topic: bad records would be read again", c.Topic))
	}
	switch c.Start {
	case StartEarliest, StartLatest:
	case StartCommitted:
		if c.Group == "" {
			errs = append(errs, errors.New("kafka.start: committed needs kafka.group"))
		}
	case StartOffsets:
		if len(c.StartOffsets) == 0 {
			errs = append(errs, errors.New("kafka.start: offsets needs kafka.start_offsets"))
		}
	default:
		errs = append(errs, fmt.Errorf("kafka.start %q: want earliest, latest, committed or offsets", c.Start))
	}
	if c.Start != StartOffsets && len(c.StartOffsets) > 0 {
		errs = append(errs, fmt.Errorf("kafka.start_offsets is only used with kafka.start: offsets (kafka.start is %q)", c.Start))
	}
	for p, o := range c.StartOffsets {
		if p < 0 || o < 0 {
			errs = append(errs, fmt.Errorf("kafka.start_offsets: partition %d offset %d: both must be non-negative", p, o))
		}
	}
	if c.CheckpointInterval < 0 {
		errs = append(errs, fmt.Errorf("delivery.checkpoint_interval %v: must be positive", c.CheckpointInterval))
	}
	if c.DeadLetterBufferBytes < 0 {
		errs = append(errs, fmt.Errorf("records.dead_letter_buffer_bytes %d: must be positive", c.DeadLetterBufferBytes))
	}
	if c.CheckpointMaxRows < 0 {
		errs = append(errs, fmt.Errorf("delivery.checkpoint_max_rows %d: must not be negative", c.CheckpointMaxRows))
	}
	if c.FetchMaxBytes < 0 || c.PollMaxRecords < 0 {
		errs = append(errs, fmt.Errorf("kafka.fetch_max_bytes %d / kafka.poll_max_records %d: must be positive", c.FetchMaxBytes, c.PollMaxRecords))
	}
	switch strings.ToUpper(c.SASL.Mechanism) {
	case "":
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if c.SASL.User == "" {
			errs = append(errs, fmt.Errorf("kafka.sasl.user is required with kafka.sasl.mechanism %s", c.SASL.Mechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("kafka.sasl.mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.SASL.Mechanism))
	}
	if err := c.Routing.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("kafka connector config: %w", errors.Join(errs...))
	}
	return nil
}
