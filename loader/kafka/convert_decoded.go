package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// decode returns the value of r as the JSON document routing reads
// (routing.table_field, routing.debezium_template): for the registry
// formats the value decoded through the Schema Registry (into c.scratch,
// valid until c's next decode), else r.Value itself; nil for a null value.
// A csv value is returned as it is (no routing rule reads one).
func (c *Converter) decode(ctx context.Context, r *kgo.Record) ([]byte, error) {
	if !IsRegistryFormat(c.format) || r.Value == nil {
		return r.Value, nil
	}
	v, err := c.decoder.AppendJSON(ctx, c.scratch[:0], r.Value)
	if err != nil {
		return nil, err
	}
	c.scratch = v
	return v, nil
}

// convertDecoded is ConvertContext for a record whose value decode
// returned as v, by c or by another converter of the same settings: a
// routed table's converter converts what the job's converter decoded to
// route the record, so a value is decoded once. The other formats convert
// r.Value (v is r.Value).
func (c *Converter) convertDecoded(ctx context.Context, r *kgo.Record, v []byte) ([]byte, error) {
	if !IsRegistryFormat(c.format) {
		return c.ConvertContext(ctx, r)
	}
	row, err := c.registryRow(r, v)
	if c.watch != nil && err == nil {
		c.watch.scan(row)
	}
	return row, err
}
