package chaos

import (
	"context"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// FormatAvro is Config.Format for a campaign whose topic carries Avro in
// the Confluent wire format, through an in-process Schema Registry
// (srtest): the sinks run with records.format avro; malformed records
// (not the wire format) must reach the dead-letter topic as with JSON.
const FormatAvro = "avro"

// eventSchema is the Avro form of Event; its field names are the
// tables' columns.
const eventSchema = `{"type":"record","name":"Event","namespace":"chaos","fields":[` +
	`{"name":"eid","type":"long"},{"name":"k","type":"long"},{"name":"ver","type":"long"},` +
	`{"name":"payload","type":"string"},{"name":"sum","type":"long"}]}`

// avroTopic is the Schema Registry side of an Avro campaign.
type avroTopic struct {
	srv    *srtest.Server
	id     int
	schema avro.Schema
}

func newAvroTopic() (*avroTopic, error) {
	srv, err := srtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	id, err := srv.Registry().Register(Topic+"-value", sr.Schema{Schema: eventSchema})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("register the event schema: %w", err)
	}
	return &avroTopic{srv: srv, id: id, schema: avro.MustParse(eventSchema)}, nil
}

// encode is e's record value in the wire format.
func (a *avroTopic) encode(e Event) ([]byte, error) {
	body, err := avro.Marshal(a.schema, map[string]any{"eid": e.EID, "k": e.K, "ver": e.Ver, "payload": e.Payload, "sum": e.Sum})
	if err != nil {
		return nil, fmt.Errorf("encode event %d: %w", e.EID, err)
	}
	return append(be.BigEndian.AppendUint32([]byte{0}, uint32(a.id)), body...), nil
}

func (a *avroTopic) close() { a.srv.Close() }

// avroEvents decodes the Avro values of a topic through the registry at
// url (the checker's own client, independent of the sinks'); a value that
// is not an event of the registry is returned as malformed.
func avroEvents(ctx context.Context, url string, values [][]byte) (events []Event, malformed []string, err error) {
	cl, err := registry.New(registry.Config{URLs: []string{url}, SchemaType: sr.TypeAvro, Attempts: 3,
		BackoffMin: 10 * time.Millisecond})
	if err != nil {
		return nil, nil, err
	}
	var buf []byte
	for _, v := range values {
		row, err := cl.AppendJSON(ctx, buf[:0], v)
		var e Event
		if err != nil || json.Unmarshal(row, &e) != nil || e.EID == 0 {
			malformed = append(malformed, string(v))
			continue
		}
		buf = row
		events = append(events, e)
	}
	return events, malformed, nil
}
