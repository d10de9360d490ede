package registry

import (
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/avrorow"
	"github.com/doris-sink/doris-sink/loader/kafka/jsonschemarow"
	"github.com/doris-sink/doris-sink/loader/kafka/protorow"
)

// Decoder turns one record payload (the bytes after the wire-format
// header) into one JSON object appended to dst. avrorow, protorow and
// jsonschemarow decoders satisfy it.
type Decoder interface {
	AppendJSON(dst, payload []byte) ([]byte, error)
}

// DecoderOptions are what every decoder is built with.
type DecoderOptions struct {
	// TimeZone renders timestamps (nil: UTC).
	TimeZone *time.Location
	// Validate checks each JSON Schema record against its schema
	// (records.json_schema.validate); Avro and Protobuf records are checked
	// by decoding them, and their factories ignore it.
	Validate bool
	// MaxRowBytes bounds one row's JSON (0: each decoder's default, 100
	// MiB); a record past it is a decode error, a bad record.
	MaxRowBytes int
}

// Factory compiles a registry schema (refs: each reference name → its
// schema text, resolved transitively) into a Decoder.
type Factory func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error)

// DefaultFactories returns the decoder factory of each schema type
// doris-sink reads.
func DefaultFactories() map[sr.SchemaType]Factory {
	return map[sr.SchemaType]Factory{
		sr.TypeAvro: func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error) {
			return avrorow.New(schema, refs, avrorow.Options{TimeZone: opt.TimeZone, MaxRowBytes: opt.MaxRowBytes})
		},
		sr.TypeProtobuf: func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error) {
			return protorow.New(schema, refs, protorow.Options{TimeZone: opt.TimeZone, MaxRowBytes: opt.MaxRowBytes})
		},
		sr.TypeJSON: func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error) {
			return jsonschemarow.New(schema, refs, jsonschemarow.Options{TimeZone: opt.TimeZone, Validate: opt.Validate, MaxRowBytes: opt.MaxRowBytes})
		},
	}
}
