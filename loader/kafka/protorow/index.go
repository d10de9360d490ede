package protorow

import (
	"encoding/binary"
	"fmt"
)

// messageAt reads the Confluent message-index list at the start of payload
// and returns the plan of the message it selects and the offset of the
// message bytes.
//
// The list is a zig-zag varint count followed by that many zig-zag varint
// indexes; the first indexes the file's top-level messages, each next one
// the messages nested in the previous. A count of 0 (the single byte 0)
// is the shortcut for [0], the first message. This is franz-go pkg/sr
// serde.go ConfluentHeader.AppendEncode/DecodeIndex (binary.AppendVarint /
// binary.ReadVarint, i.e. zig-zag), as the Confluent wire format documents
// ("message-indexes").
func (d *Decoder) messageAt(payload []byte) (*msgPlan, int, error) {
	n, k := binary.Varint(payload)
	if k <= 0 {
		return nil, 0, &DecodeError{Offset: 0, Reason: "message-index list: truncated or invalid count varint"}
	}
	if n == 0 {
		return d.top[0], k, nil
	}
	// Each index takes at least one byte.
	if n < 0 || n > int64(len(payload)-k) {
		return nil, 0, &DecodeError{Offset: 0, Reason: fmt.Sprintf("message-index list: bad count %d", n)}
	}
	off := k
	list := d.top
	var mp *msgPlan
	for i := int64(0); i < n; i++ {
		idx, k := binary.Varint(payload[off:])
		if k <= 0 {
			return nil, 0, &DecodeError{Offset: off, Reason: "message-index list: truncated or invalid index varint"}
		}
		if idx < 0 || idx >= int64(len(list)) {
			where := "the schema's top level"
			if mp != nil {
				where = string(mp.name)
			}
			return nil, 0, &DecodeError{Offset: off, Reason: fmt.Sprintf(
				"message-index list: index %d out of range (%s declares %d messages)", idx, where, len(list))}
		}
		mp = list[idx]
		list = mp.nested
		off += k
	}
	return mp, off, nil
}
