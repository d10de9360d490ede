package chaos

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"
)

// FormatProtobuf is Config.Format for a campaign whose topic carries
// Protobuf in the Confluent wire format through the in-process Schema
// Registry: the sinks run with records.format protobuf, and the fault
// table is AvroScenarios (schema-registry-down included).
const FormatProtobuf = "protobuf"

// isRegistryFormat reports whether Config.Format reads through a Schema
// Registry.
func isRegistryFormat(f string) bool { return f == FormatAvro || f == FormatProtobuf }

// protoEventSchema is the Protobuf form of Event (fields 1–5); later
// versions add string fields 6, 7, … (a new field is compatible under
// Protobuf's rules: old readers skip it).
func protoEventSchema(extra []string) string {
	s := "syntax = \"proto3\";\npackage chaos;\nmessage Event {\n  int64 eid = 1;\n  int64 k = 2;\n  int64 ver = 3;\n  string payload = 4;\n  int64 sum = 5;\n"
	for i, f := range extra {
		s += fmt.Sprintf("  string %s = %d;\n", f, 6+i)
	}
	return s + "}\n"
}

// newProtoTopic starts the registry of a Protobuf campaign. srtest checks
// only Avro compatibility, so the subject's level is NONE (as for a
// PROTOBUF subject whose compatibility is checked elsewhere).
func newProtoTopic() (*avroTopic, error) {
	a, err := newRegistryTopic(FormatProtobuf)
	if err != nil {
		return nil, err
	}
	cl, err := sr.NewClient(sr.URLs(a.srv.URL()))
	if err == nil {
		for _, r := range cl.SetCompatibility(context.Background(), sr.SetCompatibility{Level: sr.CompatNone}, Topic+"-value") {
			err = r.Err
		}
	}
	if err != nil {
		a.close()
		return nil, fmt.Errorf("set compatibility NONE on %s-value: %w", Topic, err)
	}
	id, err := a.srv.Registry().Register(Topic+"-value", sr.Schema{Schema: protoEventSchema(nil), Type: sr.TypeProtobuf})
	if err != nil {
		a.close()
		return nil, fmt.Errorf("register the event schema: %w", err)
	}
	a.id = id
	return a, nil
}

// encodeProtobuf is e's record value in the wire format: header, message
// index [0], then Event's fields as proto.Marshal writes them (proto3 zero
// values left out), the later versions' extra strings "x".
func (a *avroTopic) encodeProtobuf(e Event) []byte {
	b := appendHeader(nil, a.id)
	b = append(b, 0) // message index [0]
	for i, v := range []int64{e.EID, e.K, e.Ver} {
		if v != 0 {
			b = protowire.AppendTag(b, protowire.Number(i+1), protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		}
	}
	if e.Payload != "" {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendString(b, e.Payload)
	}
	if e.Sum != 0 {
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(e.Sum))
	}
	for i := range a.extra {
		b = protowire.AppendTag(b, protowire.Number(6+i), protowire.BytesType)
		b = protowire.AppendString(b, "x")
	}
	return b
}
