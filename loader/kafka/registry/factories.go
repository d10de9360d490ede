package registry

import (
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/avrorow"
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
}

// Factory compiles a registry schema (refs: each reference name → its
// schema text, resolved transitively) into a Decoder.
type Factory func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error)

// DefaultFactories returns the decoder factory of each schema type
// doris-sink reads.
func DefaultFactories() map[sr.SchemaType]Factory {
	return map[sr.SchemaType]Factory{
		sr.TypeAvro: func(schema string, refs map[string]string, opt DecoderOptions) (Decoder, error) {
			return avrorow.New(schema, refs, avrorow.Options{TimeZone: opt.TimeZone})
		},
		// MERGE POINT (issue 14, the "proto" branch): register
		//   sr.TypeProtobuf: func(s string, refs map[string]string, o DecoderOptions) (Decoder, error) {
		//       return protorow.New(s, refs, protorow.Options{TimeZone: o.TimeZone}) },
		//   sr.TypeJSON: func(s string, refs map[string]string, o DecoderOptions) (Decoder, error) {
		//       return jsonschemarow.New(s, refs, jsonschemarow.Options{TimeZone: o.TimeZone}) },
		// (loader/kafka/protorow, loader/kafka/jsonschemarow). Until then a
		// protobuf or json_schema job is refused at start (Client.New).
	}
}
