package kafka

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// convertRegistry decodes a Confluent wire-format value through the
// Schema Registry (c.decoder) into one JSON row in c.buf, with the
// metadata columns; with EnvelopeDebezium the decoded change event goes
// through the Debezium path (image by op, delete sign), and a null value
// is a tombstone (skipped and counted).
func (c *Converter) convertRegistry(ctx context.Context, r *kgo.Record) ([]byte, error) {
	if r.Value == nil || c.envelope == EnvelopeDebezium {
		ev, err := c.decode(ctx, r)
		if err != nil {
			return nil, err
		}
		return c.registryRow(r, ev)
	}
	c.buf.Reset()
	// Decode into c.buf's spare capacity: in the steady state the row is
	// written in place and Write copies it onto itself.
	row, err := c.decoder.AppendJSON(ctx, c.buf.AvailableBuffer(), r.Value)
	if err != nil {
		return nil, err
	}
	c.buf.Write(row)
	c.appendMetadata(r)
	return c.buf.Bytes(), nil
}

// registryRow is the row of r, whose value decoded to the JSON v (decode,
// by c or another converter of the same settings).
func (c *Converter) registryRow(r *kgo.Record, v []byte) ([]byte, error) {
	if r.Value == nil {
		if c.envelope == EnvelopeDebezium {
			return nil, ErrTombstone
		}
		return nil, errors.New("null value (tombstone): a " + c.format + " record must hold one wire-format value")
	}
	if c.envelope == EnvelopeDebezium {
		return c.debeziumRow(r, v)
	}
	c.buf.Reset()
	c.buf.Write(v)
	c.appendMetadata(r)
	return c.buf.Bytes(), nil
}
