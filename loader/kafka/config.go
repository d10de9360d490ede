package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"slices"
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
	// DefaultMaxDecompressedBatchBytes bounds what one fetched record
	// batch may decompress to (kgo.MaxDecompressBatchBytes, whose own
	// default is 1 GiB): a compressed batch of the broker's default
	// max.message.bytes (1 MiB) reaches it only at a ratio of 256.
	DefaultMaxDecompressedBatchBytes = 256 << 20
	// DefaultMaxKeyBytes and DefaultMaxHeadersBytes bound one record's
	// key and its headers (keys plus values): 1 MiB each, the broker's
	// default max.message.bytes for a whole batch.
	DefaultMaxKeyBytes     = 1 << 20
	DefaultMaxHeadersBytes = 1 << 20
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

// Config configures a Connector. Brokers and one of Topic, Topics and
// TopicRegex are required; every other zero field means the documented
// default.
type Config struct {
	// Brokers are the seed brokers, "host:port" (kafka.brokers). Required.
	Brokers []string
	// Topic is the topic to load (kafka.topic): the one-topic spelling of
	// Topics. Exactly one of Topic, Topics and TopicRegex is required.
	Topic string
	// Topics are the topics to load (kafka.topics), read together: one
	// checkpoint covers every partition of all of them.
	Topics []string
	// TopicRegex selects the topics to load by name (kafka.topic_regex, a
	// Go regexp matched against the whole name): the topics matching it at
	// the start, and those created later (found every PartitionRefresh, at
	// a checkpoint boundary: never while a checkpoint is open; read from
	// their earliest offsets). Internal topics (names starting with "__"
	// or marked internal), DeadLetterTopic and ExcludeTopics never match.
	TopicRegex string
	// ExcludeTopics never match TopicRegex: the job's own state topic
	// (cmd/ sets it).
	ExcludeTopics []string
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
	// FetchMaxBytes bounds one fetch response (kgo.FetchMaxBytes) and what
	// one partition may fill of it (kgo.FetchMaxPartitionBytes, whose own
	// default is 1 MiB); with one buffered fetch per broker it bounds the
	// consumer's memory. Default DefaultFetchMaxBytes.
	FetchMaxBytes int32
	// MaxDecompressedBatchBytes bounds what one fetched record batch may
	// decompress to; a batch past it stops Run with an error naming its
	// partition and offsets (nothing of it is read or skipped). Default
	// DefaultMaxDecompressedBatchBytes.
	MaxDecompressedBatchBytes int
	// MaxKeyBytes and MaxHeadersBytes bound one record's key and its
	// headers (keys plus values); a record past either is a bad record
	// (dead letter, or a *RecordError). Defaults DefaultMaxKeyBytes and
	// DefaultMaxHeadersBytes.
	MaxKeyBytes, MaxHeadersBytes int
	// PollMaxRecords bounds the records taken per poll. Default
	// DefaultPollMaxRecords.
	PollMaxRecords int
	// PartitionRefresh is how often the topics' partition counts are
	// checked for new partitions (read from their earliest offset), and,
	// with TopicRegex, how often new topics are looked for (at the next
	// checkpoint boundary). Default DefaultPartitionRefresh; negative
	// disables both.
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
	if c.MaxDecompressedBatchBytes == 0 {
		c.MaxDecompressedBatchBytes = DefaultMaxDecompressedBatchBytes
	}
	if c.MaxKeyBytes == 0 {
		c.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if c.MaxHeadersBytes == 0 {
		c.MaxHeadersBytes = DefaultMaxHeadersBytes
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
	errs = append(errs, c.validateTopics()...)
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
	if c.Start == StartOffsets && len(c.topicList()) != 1 {
		errs = append(errs, errors.New("kafka.start: offsets names partitions of one topic: it needs exactly one topic (kafka.topic or a kafka.topics of one), not several or kafka.topic_regex"))
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
	if c.MaxDecompressedBatchBytes < 0 || c.MaxKeyBytes < 0 || c.MaxHeadersBytes < 0 {
		errs = append(errs, fmt.Errorf("kafka.max_decompressed_batch_bytes %d / records.max_key_bytes %d / records.max_headers_bytes %d: must be positive",
			c.MaxDecompressedBatchBytes, c.MaxKeyBytes, c.MaxHeadersBytes))
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

// topicList returns the configured topics (Topic or Topics; nil with
// TopicRegex).
func (c *Config) topicList() []string {
	if c.Topic != "" {
		return []string{c.Topic}
	}
	return c.Topics
}

// topicRegexp compiles TopicRegex anchored at both ends (nil when unset).
func (c *Config) topicRegexp() (*regexp.Regexp, error) {
	if c.TopicRegex == "" {
		return nil, nil
	}
	re, err := regexp.Compile(`^(?:` + c.TopicRegex + `)$`)
	if err != nil {
		return nil, fmt.Errorf("kafka.topic_regex %q: %w", c.TopicRegex, err)
	}
	return re, nil
}

// validateTopics checks kafka.topic, kafka.topics and kafka.topic_regex.
func (c *Config) validateTopics() []error {
	var errs []error
	set := 0
	for _, on := range []bool{c.Topic != "", len(c.Topics) > 0, c.TopicRegex != ""} {
		if on {
			set++
		}
	}
	switch {
	case set == 0:
		errs = append(errs, errors.New("kafka.topic (or kafka.topics, or kafka.topic_regex) is required"))
	case set > 1:
		errs = append(errs, errors.New("kafka.topic, kafka.topics and kafka.topic_regex exclude each other: set one "+
			"(kafka.topic is the one-topic spelling of kafka.topics)"))
	}
	seen := map[string]bool{}
	for i, t := range c.Topics {
		switch {
		case t == "":
			errs = append(errs, fmt.Errorf("kafka.topics[%d] is empty", i))
		case seen[t]:
			errs = append(errs, fmt.Errorf("kafka.topics: %q is listed twice", t))
		}
		seen[t] = true
	}
	if c.DeadLetterTopic != "" && slices.Contains(c.topicList(), c.DeadLetterTopic) {
		errs = append(errs, fmt.Errorf("kafka.dead_letter_topic %q is a source topic: bad records would be read again", c.DeadLetterTopic))
	}
	if _, err := c.topicRegexp(); err != nil {
		errs = append(errs, err)
	}
	return errs
}
