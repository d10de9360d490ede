package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Record formats (kafka.format in the config; docs/design.md §5).
const (
	// FormatJSON: one JSON object per message, sent as one JSON line.
	FormatJSON = "json"
	// FormatCSV: one CSV line per message, passed through.
	FormatCSV = "csv"
	// FormatDebezium: Debezium change envelopes, sent as JSON lines with
	// __DORIS_DELETE_SIGN__.
	FormatDebezium = "debezium"
	// FormatAvro: Avro in the Confluent wire format, decoded through a
	// Schema Registry (ConvertConfig.Schemas) into JSON lines.
	FormatAvro = "avro"
	// FormatProtobuf: Protobuf in the Confluent wire format (registry).
	FormatProtobuf = "protobuf"
	// FormatJSONSchema: JSON Schema in the Confluent wire format
	// (registry).
	FormatJSONSchema = "json_schema"
)

// Envelopes of registry formats (records.envelope).
const (
	// EnvelopeNone: the decoded record is the row (the default).
	EnvelopeNone = ""
	// EnvelopeDebezium: the decoded record is a Debezium change event
	// (before/after/op/source), loaded like FormatDebezium.
	EnvelopeDebezium = "debezium"
)

// Timestamp formats of the metadata timestamp column.
const (
	// TimestampUnixMilli writes the record timestamp as milliseconds since
	// the Unix epoch (a BIGINT column). The default.
	TimestampUnixMilli = "unix_ms"
	// TimestampDatetime writes it as "2006-01-02 15:04:05.000" in UTC (a
	// DATETIME(3) column).
	TimestampDatetime = "datetime"
)

// DeleteSignColumn is Doris's hidden delete-sign column (docs/doris-facts.md §7).
const DeleteSignColumn = "__DORIS_DELETE_SIGN__"

// ErrTombstone is returned by a debezium Converter for a record with a nil
// value (the tombstone Debezium writes after a delete for log compaction).
// It carries no row; the Connector skips it and counts it
// (Metrics.Tombstones).
var ErrTombstone = errors.New("tombstone record (nil value)")

// SkipsTombstones reports whether records of format and envelope skip a
// tombstone (ErrTombstone: no row, counted in Metrics.Tombstones): the
// Debezium envelopes, FormatDebezium and a registry format with
// EnvelopeDebezium. Any other format loads a tombstone as a delete
// (DeleteConfig.Tombstones) or refuses it as a bad record (dead letter or
// failed checkpoint). doris-sink verify accounts a checkpoint's offsets
// by it.
func SkipsTombstones(format, envelope string) bool {
	return format == FormatDebezium || (IsRegistryFormat(format) && envelope == EnvelopeDebezium)
}

// MetadataColumns names the columns that receive Kafka metadata in JSON
// rows (formats json and debezium). An empty name adds no column.
type MetadataColumns struct {
	// Topic receives the topic name (a string).
	Topic string
	// Partition receives the partition number.
	Partition string
	// Offset receives the record offset.
	Offset string
	// Timestamp receives the record timestamp in TimestampFormat.
	Timestamp string
	// TimestampFormat is TimestampUnixMilli (default) or TimestampDatetime.
	TimestampFormat string
}

func (m MetadataColumns) any() bool {
	return m.Topic != "" || m.Partition != "" || m.Offset != "" || m.Timestamp != ""
}

// ConvertConfig configures a Converter.
type ConvertConfig struct {
	// Format is FormatJSON (default), FormatCSV or FormatDebezium.
	Format string
	// Metadata adds Kafka metadata columns (not with FormatCSV).
	Metadata MetadataColumns
	// Delete makes records delete rows (FormatJSON only).
	Delete DeleteConfig
	// Schemas decodes the registry formats (FormatAvro, FormatProtobuf,
	// FormatJSONSchema); required with them, unused otherwise. A
	// *registry.Client satisfies it.
	Schemas SchemaDecoder
	// Envelope is EnvelopeNone or EnvelopeDebezium (registry formats only).
	Envelope string
}

// SchemaDecoder decodes one record value in the Confluent wire format and
// appends its row, one JSON object, to dst (registry.Client.AppendJSON).
// An error matching registry.ErrUnavailable refuses the record (the run
// stops; it is never dead-lettered); any other error is a bad record.
type SchemaDecoder interface {
	AppendJSON(ctx context.Context, dst, value []byte) ([]byte, error)
}

// Converter turns Kafka records into Stream Load rows (without the line
// delimiter, which the loader adds). It reuses one buffer: the row returned
// by Convert is valid until the next call. A Converter is not safe for
// concurrent use; create one per goroutine.
type Converter struct {
	// convSettings is what every converter of one job shares: a routed
	// table's converter copies it whole (forTable, newConverter).
	convSettings
	// The fields below are one converter's own state: a routed table's
	// converter starts them afresh (TestForTableCopiesEverySetting lists
	// them; a new field is one or the other).
	buf bytes.Buffer
	// The topic value of the metadata column, cached per topic.
	topicCache string
	topicVal   []byte
	// watch counts fields the table lacks (WatchFields); nil: off.
	watch *fieldWatch
	// schemas tracks the Connect schema blocks of debezium records
	// (TrackSchemas, evolve_convert.go); nil: off.
	schemas *schemaTracker
	// vals rewrites Debezium-encoded values for their columns
	// (SetValueConversions, convert_values.go); nil: off. vbuf is its
	// scratch buffer.
	vals map[string]valueConv
	vbuf []byte
	// scratch holds a value decoded through the registry (decode).
	scratch []byte
}

// convSettings are a Converter's settings from its ConvertConfig.
type convSettings struct {
	format string
	meta   MetadataColumns
	// del sets the delete sign (DeleteConfig); zero: off. A routed table
	// may have its own (WithTableDeletes).
	del DeleteConfig
	// decoder and envelope serve the registry formats.
	decoder  SchemaDecoder
	envelope string
	// Pre-encoded `"name":` keys of the metadata columns.
	topicKey, partKey, offKey, tsKey []byte
}

// newConverter is the one constructor of a Converter: every converter,
// the job's and each routed table's, is made here from its settings.
func newConverter(s convSettings) *Converter { return &Converter{convSettings: s} }

// IsRegistryFormat reports whether format is read through a Schema
// Registry (avro, protobuf, json_schema).
func IsRegistryFormat(format string) bool {
	return format == FormatAvro || format == FormatProtobuf || format == FormatJSONSchema
}

// NewConverter validates cfg and returns a Converter.
func NewConverter(cfg ConvertConfig) (*Converter, error) {
	if cfg.Format == "" {
		cfg.Format = FormatJSON
	}
	switch cfg.Format {
	case FormatJSON, FormatDebezium:
	case FormatAvro, FormatProtobuf, FormatJSONSchema:
		if cfg.Schemas == nil {
			return nil, fmt.Errorf("kafka.format %s needs a Schema Registry (records.schema_registry.urls)", cfg.Format)
		}
	case FormatCSV:
		if cfg.Metadata.any() {
			return nil, errors.New("kafka.metadata_columns: only supported with kafka.format json or debezium, not csv")
		}
	default:
		return nil, fmt.Errorf("kafka.format %q: want json, csv, debezium, avro, protobuf or json_schema", cfg.Format)
	}
	switch cfg.Envelope {
	case EnvelopeNone:
	case EnvelopeDebezium:
		if !IsRegistryFormat(cfg.Format) {
			return nil, fmt.Errorf("records.envelope debezium: only with records.format avro, protobuf or json_schema (Debezium JSON is records.format debezium), not %s", cfg.Format)
		}
	default:
		return nil, fmt.Errorf("records.envelope %q: want debezium or nothing", cfg.Envelope)
	}
	switch cfg.Metadata.TimestampFormat {
	case "":
		cfg.Metadata.TimestampFormat = TimestampUnixMilli
	case TimestampUnixMilli, TimestampDatetime:
	default:
		return nil, fmt.Errorf("kafka.metadata_columns.timestamp_format %q: want %s or %s",
			cfg.Metadata.TimestampFormat, TimestampUnixMilli, TimestampDatetime)
	}
	if err := cfg.Delete.validate(cfg.Format); err != nil {
		return nil, err
	}
	return newConverter(convSettings{format: cfg.Format, meta: cfg.Metadata, del: cfg.Delete, decoder: cfg.Schemas,
		envelope: cfg.Envelope, topicKey: jsonKey(cfg.Metadata.Topic), partKey: jsonKey(cfg.Metadata.Partition),
		offKey: jsonKey(cfg.Metadata.Offset), tsKey: jsonKey(cfg.Metadata.Timestamp)}), nil
}

// Format returns the record format.
func (c *Converter) Format() string { return c.format }

// LoaderFormat returns the Stream Load format the loader must use for
// rows of format ("json" or "csv").
func LoaderFormat(format string) string {
	if format == FormatCSV {
		return "csv"
	}
	return "json"
}

// EnvelopeProperties returns the Stream Load properties rows of a
// registry format with envelope need: hidden_columns:
// __DORIS_DELETE_SIGN__ for EnvelopeDebezium, nothing otherwise. Merge
// them into loader.Config.Properties.
func EnvelopeProperties(envelope string) map[string]string {
	return RequiredProperties(map[string]string{EnvelopeDebezium: FormatDebezium}[envelope])
}

// RequiredProperties returns the Stream Load properties rows of format
// need: hidden_columns: __DORIS_DELETE_SIGN__ for FormatDebezium (so that
// deletes reach the delete-sign column, docs/doris-facts.md §1.4 and §7), nothing
// otherwise. Merge them into loader.Config.Properties.
func RequiredProperties(format string) map[string]string {
	if format == FormatDebezium {
		return map[string]string{"hidden_columns": DeleteSignColumn}
	}
	return nil
}

// jsonKey returns `"name":` JSON-encoded, or nil for "".
func jsonKey(name string) []byte {
	if name == "" {
		return nil
	}
	b, _ := json.Marshal(name) // a string always marshals
	return append(b, ':')
}

// Convert returns the row of r. Errors say why the value cannot be
// converted (the Connector adds topic, partition and offset).
func (c *Converter) Convert(r *kgo.Record) ([]byte, error) {
	return c.ConvertContext(context.Background(), r)
}

// ConvertContext is Convert with the context of the registry lookups of
// the registry formats (a schema id seen for the first time).
func (c *Converter) ConvertContext(ctx context.Context, r *kgo.Record) ([]byte, error) {
	var (
		row []byte
		err error
	)
	switch c.format {
	case FormatCSV:
		return convertCSV(r.Value)
	case FormatDebezium:
		row, err = c.convertDebezium(r)
	case FormatAvro, FormatProtobuf, FormatJSONSchema:
		row, err = c.convertRegistry(ctx, r)
	default:
		row, err = c.convertJSON(r)
	}
	if c.watch != nil && err == nil {
		c.watch.scan(row)
	}
	return row, err
}

// appendMetadata adds the metadata columns to the compact JSON object in
// c.buf (which ends in '}').
func (c *Converter) appendMetadata(r *kgo.Record) {
	if c.topicKey != nil {
		if c.topicCache != r.Topic || c.topicVal == nil {
			c.topicCache = r.Topic
			c.topicVal, _ = json.Marshal(r.Topic)
		}
		c.field(c.topicKey, c.topicVal)
	}
	if c.partKey != nil {
		c.openField(c.partKey)
		c.buf.Write(strconv.AppendInt(c.buf.AvailableBuffer(), int64(r.Partition), 10))
		c.buf.WriteByte('}')
	}
	if c.offKey != nil {
		c.openField(c.offKey)
		c.buf.Write(strconv.AppendInt(c.buf.AvailableBuffer(), r.Offset, 10))
		c.buf.WriteByte('}')
	}
	if c.tsKey != nil {
		c.openField(c.tsKey)
		if c.meta.TimestampFormat == TimestampDatetime {
			b := append(c.buf.AvailableBuffer(), '"')
			b = r.Timestamp.UTC().AppendFormat(b, "2006-01-02 15:04:05.000")
			c.buf.Write(append(b, '"'))
		} else {
			c.buf.Write(strconv.AppendInt(c.buf.AvailableBuffer(), r.Timestamp.UnixMilli(), 10))
		}
		c.buf.WriteByte('}')
	}
}

// field adds "key":value to the object in c.buf.
func (c *Converter) field(key, value []byte) {
	c.openField(key)
	c.buf.Write(value)
	c.buf.WriteByte('}')
}

// openField removes the closing '}' of the object in c.buf and writes the
// separator and key: the caller writes the value and '}'.
func (c *Converter) openField(key []byte) {
	b := c.buf.Bytes()
	c.buf.Truncate(len(b) - 1)
	if len(b) > 2 { // not "{}"
		c.buf.WriteByte(',')
	}
	c.buf.Write(key)
}
