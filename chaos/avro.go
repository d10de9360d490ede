package chaos

import (
	"context"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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

// avroTopic is the Schema Registry side of an Avro or Protobuf campaign.
type avroTopic struct {
	srv *srtest.Server
	id  int
	// format is FormatAvro or FormatProtobuf.
	format string
	// extra are the fields later versions added (with defaults).
	extra []string
}

// bump registers the next version of the event schema (one more string
// field with a default: BACKWARD compatible) under the topic's subject;
// events are encoded with it from now on, under its new schema id.
func (a *avroTopic) bump() error {
	name := fmt.Sprintf("note%d", len(a.extra)+1)
	fields := ""
	for _, f := range append(a.extra, name) {
		fields += `,{"name":"` + f + `","type":"string","default":""}`
	}
	s := sr.Schema{Schema: eventSchema[:len(eventSchema)-2] + fields + "]}"}
	if a.format == FormatProtobuf {
		s = sr.Schema{Schema: protoEventSchema(append(a.extra, name)), Type: sr.TypeProtobuf}
	}
	id, err := a.srv.Registry().Register(Topic+"-value", s)
	if err != nil {
		return fmt.Errorf("register event schema version %d: %w", len(a.extra)+2, err)
	}
	a.id, a.extra = id, append(a.extra, name)
	return nil
}

func newAvroTopic() (*avroTopic, error) {
	a, err := newRegistryTopic(FormatAvro)
	if err != nil {
		return nil, err
	}
	if a.id, err = a.srv.Registry().Register(Topic+"-value", sr.Schema{Schema: eventSchema}); err != nil {
		a.close()
		return nil, fmt.Errorf("register the event schema: %w", err)
	}
	return a, nil
}

// newRegistryTopic starts the in-process registry of a format campaign;
// the caller registers the first schema.
func newRegistryTopic(format string) (*avroTopic, error) {
	srv, err := srtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	return &avroTopic{srv: srv, format: format}, nil
}

// appendHeader appends the wire-format header of schema id.
func appendHeader(b []byte, id int) []byte {
	return be.BigEndian.AppendUint32(append(b, 0), uint32(id))
}

// encode is e's record value in the wire format: the Avro binary
// encoding of eventSchema's fields in order (longs zig-zag varints,
// strings length-prefixed), then the later versions' extra strings.
func (a *avroTopic) encode(e Event) ([]byte, error) {
	if a.format == FormatProtobuf {
		return a.encodeProtobuf(e), nil
	}
	b := appendHeader(nil, a.id)
	b = be.AppendVarint(b, e.EID)
	b = be.AppendVarint(b, e.K)
	b = be.AppendVarint(b, e.Ver)
	b = appendAvroString(b, e.Payload)
	b = be.AppendVarint(b, e.Sum)
	for range a.extra {
		b = appendAvroString(b, "x")
	}
	return b, nil
}

func appendAvroString(b []byte, s string) []byte {
	return append(be.AppendVarint(b, int64(len(s))), s...)
}

func (a *avroTopic) close() { a.srv.Close() }

// avroEvents decodes the Avro (or, with format FormatProtobuf, Protobuf)
// values of a topic through the registry at url (the checker's own client,
// independent of the sinks'); a value that is not an event of the registry
// is returned as malformed.
func avroEvents(ctx context.Context, url, format string, values [][]byte) (events []Event, malformed []string, err error) {
	typ := sr.TypeAvro
	if format == FormatProtobuf {
		typ = sr.TypeProtobuf
	}
	cl, err := registry.New(registry.Config{URLs: []string{url}, SchemaType: typ, Attempts: 3,
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

// AvroScenarios is Scenarios plus the faults of an Avro topic (the table
// of a FormatAvro campaign without Config.Scenarios).
var AvroScenarios = append(append([]Scenario(nil), Scenarios...),
	Scenario{RegistryDown, 6, false, "the Schema Registry is down when a new schema version's first record arrives: the sinks refuse it (run exits naming the record; nothing dead-lettered, although a dead-letter topic is configured), then the registry is back and they load it"})

// registryDown: produce, start the sinks (with the dead-letter topic),
// take the registry down, produce records of a new schema version (a new
// id no sink has cached): each sink must exit non-zero naming the record
// and the registry after records.schema_registry.max_wait, never skip or
// dead-letter it; then the registry comes back and the sinks load
// everything.
func (k *campaign) registryDown(ctx context.Context, st Step) error {
	if k.avro == nil {
		return k.produceAndSettle(ctx, st, nil) // a JSON campaign: nothing to take down
	}
	if err := k.produce(ctx, st.Events, 0); err != nil {
		return err
	}
	ps, err := k.start(true)
	if err != nil {
		return err
	}
	if err := k.waitReady(ctx, ps); err != nil {
		killAll(ps)
		return err
	}
	k.avro.srv.Registry().SetDown(true)
	defer k.avro.srv.Registry().SetDown(false)
	if err := k.avro.bump(); err != nil {
		killAll(ps)
		return err
	}
	if err := k.produce(ctx, st.N*5, 0); err != nil {
		killAll(ps)
		return err
	}
	for i, p := range ps {
		code, err := k.exit(ctx, p)
		if err != nil {
			killAll(ps)
			return k.procErr(i, p, "refusal while the schema registry is down", err)
		}
		tail := p.Tail(maxTail)
		if code == 0 || code == 137 || !strings.Contains(tail, Topic+"/") || !strings.Contains(tail, "schema registry unavailable") {
			killAll(ps)
			return k.procErr(i, p, "refusal while the schema registry is down",
				fmt.Errorf("exit code %d; want non-zero naming %s/<partition>@<offset> and the registry", code, Topic))
		}
		k.res.Kills["refused:schema-registry-down"]++
	}
	k.avro.srv.Registry().SetDown(false)
	return k.settle(ctx, true, func(ps []*Process) error { return k.waitReady(ctx, ps) })
}
