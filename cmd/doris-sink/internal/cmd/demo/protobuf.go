package demo

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// formatProtobuf is --format protobuf: the events are produced as
// Protobuf in the Confluent wire format through an in-process Schema
// Registry, and the connectors read them with records.format protobuf.
const formatProtobuf = "protobuf"

// orderProto is the Protobuf form of event: the JSON form's fields, the
// amount as the Confluent registry's confluent.type.Decimal (a known
// dependency: no reference needed) and the delete sign as an int32.
const orderProto = `syntax = "proto3";
package demo;

import "confluent/type/decimal.proto";

message OrderEvent {
  int64 order_id = 1;
  int64 op_version = 2;
  string status = 3;
  confluent.type.Decimal amount = 4;
  int32 __DORIS_DELETE_SIGN__ = 5;
}
`

// startRegistry starts the in-process Schema Registry of format (avro or
// protobuf) and registers the events' schema under the topic's subject.
func startRegistry(format string) (*registryEvents, error) {
	srv, err := srtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	s := sr.Schema{Schema: orderSchema}
	if format == formatProtobuf {
		s = sr.Schema{Schema: orderProto, Type: sr.TypeProtobuf}
	}
	id, err := srv.Registry().Register(demoTopic+"-value", s)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("register %s-value: %w", demoTopic, err)
	}
	return &registryEvents{srv: srv, id: id, format: format}, nil
}

// encodeProtobuf is e's record value in the wire format: the header, the
// message index [0] (one byte 0), and OrderEvent as proto.Marshal writes
// it (fields in number order, proto3 zero values left out).
func (a *registryEvents) encodeProtobuf(e event) ([]byte, error) {
	whole, frac, _ := strings.Cut(e.Amount, ".")
	if len(frac) > 2 {
		return nil, fmt.Errorf("order %d: amount %q has more than 2 decimals", e.OrderID, e.Amount)
	}
	unscaled, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", 2-len(frac)), 10)
	if !ok || unscaled.Sign() < 0 {
		return nil, fmt.Errorf("order %d: amount %q", e.OrderID, e.Amount)
	}
	value := unscaled.Bytes() // non-negative: prefix a 0 when the sign bit is set
	if len(value) == 0 || value[0]&0x80 != 0 {
		value = append([]byte{0}, value...)
	}
	var dec []byte
	dec = protowire.AppendTag(dec, 1, protowire.BytesType)
	dec = protowire.AppendBytes(dec, value)
	dec = protowire.AppendTag(dec, 3, protowire.VarintType)
	dec = protowire.AppendVarint(dec, 2) // scale

	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(a.id))
	b = append(b, 0) // message index [0]
	b = appendVarintField(b, 1, e.OrderID)
	b = appendVarintField(b, 2, e.OpVersion)
	if e.Status != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, e.Status)
	}
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, dec)
	if e.Delete {
		b = appendVarintField(b, 5, 1)
	}
	return b, nil
}

// appendVarintField appends an int64 field unless it is 0 (proto3).
func appendVarintField(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}
