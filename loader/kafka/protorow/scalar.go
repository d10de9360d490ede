package protorow

import (
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// scalar appends the JSON value of one scalar (or enum) value v of field f;
// v is the raw varint / fixed bytes, or the content of a string or bytes
// value. wt has been checked against the field's kind.
func (s *state) scalar(dst, v []byte, base int, wt protowire.Type, mp *msgPlan, f *fieldPlan) ([]byte, error) {
	switch wt {
	case protowire.BytesType:
		if f.kind == protoreflect.BytesKind {
			return appendBytes(dst, v), nil
		}
		out, bad := appendString(dst, v, f.utf8)
		if bad >= 0 {
			return dst, &DecodeError{Offset: base + bad, Field: string(mp.name) + "." + f.name,
				Reason: "string is not valid UTF-8"}
		}
		return out, nil
	case protowire.Fixed32Type:
		u, _ := protowire.ConsumeFixed32(v)
		switch f.kind {
		case protoreflect.FloatKind:
			return appendFloat(dst, float64(math.Float32frombits(u)), 32), nil
		case protoreflect.Sfixed32Kind:
			return strconv.AppendInt(dst, int64(int32(u)), 10), nil
		}
		return strconv.AppendUint(dst, uint64(u), 10), nil
	case protowire.Fixed64Type:
		u, _ := protowire.ConsumeFixed64(v)
		switch f.kind {
		case protoreflect.DoubleKind:
			return appendFloat(dst, math.Float64frombits(u), 64), nil
		case protoreflect.Sfixed64Kind:
			return strconv.AppendInt(dst, int64(u), 10), nil
		}
		return strconv.AppendUint(dst, u, 10), nil
	case protowire.VarintType:
		u, _ := protowire.ConsumeVarint(v)
		switch f.kind {
		case protoreflect.BoolKind:
			if u != 0 {
				return append(dst, "true"...), nil
			}
			return append(dst, "false"...), nil
		case protoreflect.EnumKind:
			if f.enum.null {
				return append(dst, "null"...), nil
			}
			if name := f.enum.name(int32(u)); name != nil {
				return append(dst, name...), nil
			}
			return strconv.AppendInt(dst, int64(int32(u)), 10), nil // unknown number
		case protoreflect.Int32Kind:
			return strconv.AppendInt(dst, int64(int32(u)), 10), nil
		case protoreflect.Int64Kind:
			return strconv.AppendInt(dst, int64(u), 10), nil
		case protoreflect.Uint32Kind:
			return strconv.AppendUint(dst, uint64(uint32(u)), 10), nil
		case protoreflect.Uint64Kind:
			return strconv.AppendUint(dst, u, 10), nil
		case protoreflect.Sint32Kind:
			return strconv.AppendInt(dst, int64(int32(protowire.DecodeZigZag(u&math.MaxUint32))), 10), nil
		case protoreflect.Sint64Kind:
			return strconv.AppendInt(dst, protowire.DecodeZigZag(u), 10), nil
		}
	}
	return dst, &DecodeError{Offset: base, Field: string(mp.name) + "." + f.name,
		Reason: fmt.Sprintf("wire type %d does not fit a %s field", wt, kindName(f))}
}
