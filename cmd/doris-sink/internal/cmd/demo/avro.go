package demo

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"

	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// formatAvro is --format avro: the events are produced as Avro in the
// Confluent wire format through an in-process Schema Registry, and the
// connectors read them with records.format avro.
const formatAvro = "avro"

// orderSchema is the Avro form of event: the JSON form's fields, the
// amount as decimal(12,2) and the delete sign as an int column.
const orderSchema = `{"type":"record","name":"OrderEvent","namespace":"demo","fields":[` +
	`{"name":"order_id","type":"long"},{"name":"op_version","type":"long"},{"name":"status","type":"string"},` +
	`{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},` +
	`{"name":"__DORIS_DELETE_SIGN__","type":"int"}]}`

// registryEvents is the registry side of --format avro and protobuf.
type registryEvents struct {
	srv *srtest.Server
	id  int
	// format is formatAvro or formatProtobuf.
	format string
}

// encode is e's record value in the wire format of a.format.
func (a *registryEvents) encode(e event) ([]byte, error) {
	if a.format == formatProtobuf {
		return a.encodeProtobuf(e)
	}
	return a.encodeAvro(e)
}

// encodeAvro is e's record value in the wire format: the Avro binary
// encoding of orderSchema's fields in order (longs and ints zig-zag
// varints, strings and bytes length-prefixed, the decimal as its unscaled
// value in big-endian two's complement).
func (a *registryEvents) encodeAvro(e event) ([]byte, error) {
	whole, frac, _ := strings.Cut(e.Amount, ".")
	if len(frac) > 2 {
		return nil, fmt.Errorf("order %d: amount %q has more than 2 decimals", e.OrderID, e.Amount)
	}
	unscaled, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", 2-len(frac)), 10)
	if !ok {
		return nil, fmt.Errorf("order %d: amount %q", e.OrderID, e.Amount)
	}
	amount := unscaled.Bytes() // non-negative: prefix a 0 when the sign bit is set
	if len(amount) == 0 || amount[0]&0x80 != 0 {
		amount = append([]byte{0}, amount...)
	}
	del := int64(0)
	if e.Delete {
		del = 1
	}
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(a.id))
	b = binary.AppendVarint(b, e.OrderID)
	b = binary.AppendVarint(b, e.OpVersion)
	b = append(binary.AppendVarint(b, int64(len(e.Status))), e.Status...)
	b = append(binary.AppendVarint(b, int64(len(amount))), amount...)
	return binary.AppendVarint(b, del), nil
}
