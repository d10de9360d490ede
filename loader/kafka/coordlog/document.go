package coordlog

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// decodeDocument decodes a Store's state record (topic names the state
// topic in errors).
func decodeDocument(topic string, rec Record) (*checkpoint.State, document, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(rec.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, doc, fmt.Errorf("state topic %s offset %d: not a doris-sink state document: %w", topic, rec.Offset, err)
	}
	if doc.Format != StoreFormatName || doc.Version != StoreFormatVersion {
		return nil, doc, fmt.Errorf("state topic %s offset %d: format %s/%d, this doris-sink reads %s/%d",
			topic, rec.Offset, doc.Format, doc.Version, StoreFormatName, StoreFormatVersion)
	}
	st, err := checkpoint.Decode(doc.Checkpoint)
	if err != nil {
		return nil, doc, fmt.Errorf("state topic %s offset %d: %w", topic, rec.Offset, err)
	}
	return st, doc, nil
}
