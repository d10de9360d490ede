package demo

import (
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

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

// avroEvents is the registry side of --format avro.
type avroEvents struct {
	srv    *srtest.Server
	id     int
	schema avro.Schema
}

func startAvro() (*avroEvents, error) {
	srv, err := srtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	id, err := srv.Registry().Register(demoTopic+"-value", sr.Schema{Schema: orderSchema})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("register %s-value: %w", demoTopic, err)
	}
	return &avroEvents{srv: srv, id: id, schema: avro.MustParse(orderSchema)}, nil
}

// encode is e's record value in the wire format.
func (a *avroEvents) encode(e event) ([]byte, error) {
	amount, ok := new(big.Rat).SetString(e.Amount)
	if !ok {
		return nil, fmt.Errorf("order %d: amount %q", e.OrderID, e.Amount)
	}
	del := int32(0)
	if e.Delete {
		del = 1
	}
	body, err := avro.Marshal(a.schema, map[string]any{"order_id": e.OrderID, "op_version": e.OpVersion,
		"status": e.Status, "amount": amount, "__DORIS_DELETE_SIGN__": del})
	if err != nil {
		return nil, fmt.Errorf("order %d: %w", e.OrderID, err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(a.id)), body...), nil
}
