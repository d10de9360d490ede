package bench

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// protoSchema is the Protobuf form of the rows rowGen writes: the same
// fields with the same values. The amount is a double, the type of the
// JSON number it is (every amount is an integer plus .25, exact in a
// double, and the decoder writes it back as the same text); loader/kafka/protorow's
// testdata/bench.proto is the same message.
const protoSchema = `syntax = "proto3";
package bench;
message Record {
  int64 id = 1;
  int64 ts = 2;
  string customer = 3;
  double amount = 4;
  string note = 5;
}
`

// protoSubject is the registry subject of protoSchema: not avroSchema's,
// whose compatibility check would refuse a PROTOBUF version.
const protoSubject = "bench-protobuf-value"

// appendProtobuf appends row i in the Confluent wire format: header,
// message index [0] (the single byte 0) and the Record as proto.Marshal
// writes it (fields in number order, proto3 zero values omitted).
func (g *rowGen) appendProtobuf(dst []byte, i int64) []byte {
	js := (&rowGen{format: "json", size: g.size, pool: g.pool, ts: g.ts}).appendRow(g.scratch[:0], i)
	g.scratch = js
	k := bytes.Index(js, []byte(`"note":"`))
	note := js[k+len(`"note":"`) : len(js)-2]
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(g.protoSchemaID))
	dst = append(dst, 0) // message index [0]
	if i != 0 {
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(i))
	}
	if g.ts+i != 0 {
		dst = protowire.AppendTag(dst, 2, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(g.ts+i))
	}
	dst = protowire.AppendTag(dst, 3, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(len("c-")+len(strconv.FormatInt(i%1000, 10))))
	dst = append(dst, "c-"...)
	dst = strconv.AppendInt(dst, i%1000, 10)
	dst = protowire.AppendTag(dst, 4, protowire.Fixed64Type)
	dst = protowire.AppendFixed64(dst, math.Float64bits(float64(i%100000)+0.25))
	dst = protowire.AppendTag(dst, 5, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(len(note)))
	return append(dst, note...)
}
