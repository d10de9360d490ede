package registry

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of the Confluent wire-format header: magic byte 0
// and the big-endian 4-byte schema id.
const HeaderSize = 5

// WireError is a value that is not in the Confluent wire format.
type WireError struct {
	// Offset is the byte offset in the value of what is wrong.
	Offset int
	// Reason says what.
	Reason string
}

// Error names the offset and the reason.
func (e *WireError) Error() string {
	return fmt.Sprintf("not the Confluent wire format at byte %d: %s", e.Offset, e.Reason)
}

// ParseHeader splits a record value into its schema id and payload. A
// value shorter than the header or whose first byte is not the magic byte
// 0 is a *WireError.
func ParseHeader(value []byte) (id int, payload []byte, err error) {
	if len(value) == 0 {
		return 0, nil, &WireError{Offset: 0, Reason: "empty value (want magic byte 0 and a 4-byte schema id)"}
	}
	if value[0] != 0 {
		reason := fmt.Sprintf("magic byte %#02x, want 0x00", value[0])
		if value[0] == '{' || value[0] == '[' {
			reason += " (the value looks like plain JSON: records.format json?)"
		}
		return 0, nil, &WireError{Offset: 0, Reason: reason}
	}
	if len(value) < HeaderSize {
		return 0, nil, &WireError{Offset: len(value), Reason: fmt.Sprintf("value ends after %d bytes, inside the 4-byte schema id", len(value))}
	}
	return int(binary.BigEndian.Uint32(value[1:HeaderSize])), value[HeaderSize:], nil
}
