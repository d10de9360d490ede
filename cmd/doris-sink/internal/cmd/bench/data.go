package bench

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
)

// avroSchema is the Avro form of the rows rowGen writes: the same fields
// with the same values (the amount as decimal(12,2)), so the avro and json
// cases of one size carry the same logical data.
const avroSchema = `{"type":"record","name":"Row","namespace":"bench","fields":[` +
	`{"name":"id","type":"long"},{"name":"ts","type":"long"},{"name":"customer","type":"string"},` +
	`{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},` +
	`{"name":"note","type":"string"}]}`

// rowGen makes rows of an exact size in a format: a few typed fields and
// a random hex note that pads the row to size (half the bytes of a 1 KiB
// row are random, so compression cannot make it small). It is not safe for concurrent
// use.
type rowGen struct {
	format string
	size   int
	pool   []byte
	ts     int64
	// schemaID is the registry id of avroSchema (format avro).
	schemaID int
	// protoSchemaID is the registry id of protoSchema (format protobuf).
	protoSchemaID int
	// jsonSchemaID is the registry id of jsonSchema (format json_schema).
	jsonSchemaID int
	scratch      []byte
}

// newRowGen returns a generator with a deterministic pool (seed).
func newRowGen(format string, size int, seed uint64) *rowGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	raw := make([]byte, 32<<10)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return &rowGen{format: format, size: size, pool: []byte(hex.EncodeToString(raw)), ts: 1_760_000_000_000}
}

// appendRow appends row i to dst and returns it.
func (g *rowGen) appendRow(dst []byte, i int64) []byte {
	if g.format == "avro" {
		return g.appendAvro(dst, i)
	}
	if g.format == "protobuf" {
		return g.appendProtobuf(dst, i)
	}
	if g.format == "json_schema" {
		return g.appendJSONSchema(dst, i)
	}
	start := len(dst)
	csv := g.format == "csv"
	if csv {
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, g.ts+i, 10)
		dst = append(dst, ",c-"...)
		dst = strconv.AppendInt(dst, i%1000, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, i%100000, 10)
		dst = append(dst, ".25,"...)
	} else {
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, `,"ts":`...)
		dst = strconv.AppendInt(dst, g.ts+i, 10)
		dst = append(dst, `,"customer":"c-`...)
		dst = strconv.AppendInt(dst, i%1000, 10)
		dst = append(dst, `","amount":`...)
		dst = strconv.AppendInt(dst, i%100000, 10)
		dst = append(dst, `.25,"note":"`...)
	}
	tail := 0
	if !csv {
		tail = 2 // `"}`
	}
	pad := g.size - (len(dst) - start) - tail
	if pad < 1 {
		pad = 1
	}
	off := int((i * 7919) % int64(len(g.pool)-pad))
	dst = append(dst, g.pool[off:off+pad]...)
	if !csv {
		dst = append(dst, `"}`...)
	}
	return dst
}

// appendAvro appends row i in the Confluent wire format: the JSON row of
// the same size's fields, Avro-encoded (smaller: no keys, binary numbers).
func (g *rowGen) appendAvro(dst []byte, i int64) []byte {
	js := (&rowGen{format: "json", size: g.size, pool: g.pool, ts: g.ts}).appendRow(g.scratch[:0], i)
	g.scratch = js
	k := bytes.Index(js, []byte(`"note":"`))
	note := js[k+len(`"note":"`) : len(js)-2]
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(g.schemaID))
	dst = binary.AppendVarint(dst, i)
	dst = binary.AppendVarint(dst, g.ts+i)
	customer := "c-" + strconv.FormatInt(i%1000, 10)
	dst = binary.AppendVarint(dst, int64(len(customer)))
	dst = append(dst, customer...)
	// amount (i % 100000).25 unscaled at scale 2, big-endian two's complement
	unscaled := (i%100000)*100 + 25
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], uint64(unscaled))
	n := 0
	for n < 7 && be[n] == 0 && be[n+1]&0x80 == 0 {
		n++
	}
	dst = binary.AppendVarint(dst, int64(8-n))
	dst = append(dst, be[n:]...)
	dst = binary.AppendVarint(dst, int64(len(note)))
	return append(dst, note...)
}
