package protorow

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxDepth bounds message nesting (protobuf-go's default recursion limit).
const maxDepth = 10000

// entry is one occurrence of a known field in a message's bytes.
type entry struct {
	f          int32 // index in msgPlan.fields
	start, end int32 // the value's bytes (a group's content without its end tag)
	wt         protowire.Type
}

// state is the scratch space of one AppendJSON call. Nested messages push
// their entries and oneof winners above their parent's and pop them when
// done, so one pair of slices serves the whole record.
type state struct {
	ents    []entry
	wins    []int32 // per real oneof: the index of the field that is set, or -1
	depth   int
	unknown int64
	// limit is the length the row's dst may reach (Options.MaxRowBytes).
	limit int
	tz    *time.Location
}

func (s *state) reset() {
	s.ents, s.wins, s.depth = s.ents[:0], s.wins[:0], 0
}

// scan records the known fields of message b (at offset base in the
// payload) as entries, sorted by field (stable: repeated values keep their
// order), and the winner of each oneof (the member that came last). It
// returns where its entries and winners start; the caller pops them with
// s.pop.
func (s *state) scan(b []byte, base int, mp *msgPlan) (start, winStart int, err error) {
	start, winStart = len(s.ents), len(s.wins)
	for range mp.oneofs {
		s.wins = append(s.wins, -1)
	}
	sorted := true
	last := int32(-1)
	for i := 0; i < len(b); {
		num, wt, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return start, winStart, &DecodeError{Offset: base + i, Field: string(mp.name),
				Reason: "bad field tag", Err: protowire.ParseError(n)}
		}
		if num > protowire.MaxValidNumber {
			return start, winStart, &DecodeError{Offset: base + i, Field: string(mp.name),
				Reason: fmt.Sprintf("field number %d out of range", num)}
		}
		cs, vlen, m := consume(num, wt, b[i+n:])
		vs := i + n + cs
		fi := mp.lookup(int32(num))
		if m < 0 {
			return start, winStart, &DecodeError{Offset: base + i, Field: fieldName(mp, fi, num),
				Reason: "bad field value", Err: protowire.ParseError(m)}
		}
		i += n + m
		if fi < 0 {
			s.unknown++
			continue
		}
		f := &mp.fields[fi]
		if !wireOK(f, wt) {
			return start, winStart, &DecodeError{Offset: base + i - n - m, Field: fieldName(mp, fi, num),
				Reason: fmt.Sprintf("wire type %d does not fit a %s field", wt, kindName(f))}
		}
		if vs > maxInt32-vlen {
			return start, winStart, &DecodeError{Offset: base + vs, Field: fieldName(mp, fi, num), Reason: "message too large"}
		}
		s.ents = append(s.ents, entry{f: fi, start: int32(vs), end: int32(vs + vlen), wt: wt})
		if fi < last {
			sorted = false
		}
		last = fi
		if f.oneof >= 0 {
			s.wins[winStart+f.oneof] = fi
		}
	}
	if !sorted {
		slices.SortStableFunc(s.ents[start:], func(a, b entry) int { return cmp.Compare(a.f, b.f) })
	}
	return start, winStart, nil
}

const maxInt32 = 1<<31 - 1

// consume measures the value of a field with wire type wt at the start of
// b: its content starts at cs and is clen bytes long (a length-delimited
// value without its length, a group without its end tag); m is the whole
// value's length, or a negative protowire error code.
func consume(num protowire.Number, wt protowire.Type, b []byte) (cs, clen, m int) {
	switch wt {
	case protowire.BytesType:
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return 0, 0, m
		}
		return m - len(v), len(v), m
	case protowire.StartGroupType:
		v, m := protowire.ConsumeGroup(num, b)
		if m < 0 {
			return 0, 0, m
		}
		return 0, len(v), m
	}
	m = protowire.ConsumeFieldValue(num, wt, b)
	if m < 0 {
		return 0, 0, m
	}
	return 0, m, m
}

func (s *state) pop(start, winStart int) {
	s.ents, s.wins = s.ents[:start], s.wins[:winStart]
}

// wireOK reports whether wire type wt may carry field f. Repeated scalars
// may come packed (bytes) or one by one, whatever the schema declares, as
// every protobuf parser accepts.
func wireOK(f *fieldPlan, wt protowire.Type) bool {
	if f.mapKey != nil {
		return wt == protowire.BytesType
	}
	want := wireOf(f.kind)
	if f.list && want != protowire.BytesType && want != protowire.StartGroupType && wt == protowire.BytesType {
		return true
	}
	return wt == want
}

func wireOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.BytesType // string, bytes, message
}

func kindName(f *fieldPlan) string {
	switch {
	case f.mapKey != nil:
		return "map"
	case f.list:
		return "repeated " + f.kind.String()
	}
	return f.kind.String()
}

func fieldName(mp *msgPlan, fi int32, num protowire.Number) string {
	if fi >= 0 {
		return string(mp.name) + "." + mp.fields[fi].name
	}
	return fmt.Sprintf("%s.<field %d>", mp.name, num)
}

// walk appends message b (at offset base) as a JSON object of its fields.
func (s *state) walk(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	if s.depth++; s.depth > maxDepth {
		return dst, &DecodeError{Offset: base, Field: string(mp.name), Reason: fmt.Sprintf("nested deeper than %d", maxDepth)}
	}
	defer func() { s.depth-- }()
	start, winStart, err := s.scan(b, base, mp)
	defer s.pop(start, winStart)
	if err != nil {
		return dst, err
	}
	end := len(s.ents)
	dst = append(dst, '{')
	first := true
	j := start
	for fi := range mp.fields {
		f := &mp.fields[fi]
		k := j
		for k < end && s.ents[k].f == int32(fi) {
			k++
		}
		if k == j { // absent
			if f.presence {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.key...)
			if dst, err = s.zero(dst, f, base); err != nil {
				return dst, err
			}
			continue
		}
		if f.oneof >= 0 && s.wins[winStart+f.oneof] != int32(fi) {
			// An earlier member of a oneof set later to another member: not
			// written, but still checked.
			if dst, err = s.check(dst, b, base, mp, f, j, k); err != nil {
				return dst, err
			}
			j = k
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.key...)
		if dst, err = s.value(dst, b, base, mp, f, j, k); err != nil {
			return dst, err
		}
		j = k
	}
	if len(dst) > s.limit {
		return dst, s.tooBig(base, mp)
	}
	return append(dst, '}'), nil
}

// tooBig is the error of a row whose JSON passed s.limit.
func (s *state) tooBig(base int, mp *msgPlan) error {
	return &DecodeError{Offset: base, Field: string(mp.name), Reason: "its JSON passes the row bound", Err: ErrRowTooBig}
}

// value appends the JSON value of field f whose occurrences are entries
// [j, k).
func (s *state) value(dst, b []byte, base int, mp *msgPlan, f *fieldPlan, j, k int) ([]byte, error) {
	var err error
	switch {
	case f.mapKey != nil:
		dst = append(dst, '{')
		for i := j; i < k; i++ {
			if i > j {
				dst = append(dst, ',')
			}
			e := s.ents[i]
			if dst, err = s.mapEntry(dst, b[e.start:e.end], base+int(e.start), mp, f); err != nil {
				return dst, err
			}
			if len(dst) > s.limit {
				return dst, s.tooBig(base+int(e.start), mp)
			}
		}
		return append(dst, '}'), nil
	case f.list:
		dst = append(dst, '[')
		n := 0
		for i := j; i < k; i++ {
			e := s.ents[i]
			if dst, err = s.element(dst, b[e.start:e.end], base+int(e.start), e.wt, mp, f, &n); err != nil {
				return dst, err
			}
			if len(dst) > s.limit {
				return dst, s.tooBig(base+int(e.start), mp)
			}
		}
		return append(dst, ']'), nil
	case f.msg != nil:
		if k-j == 1 {
			e := s.ents[j]
			return s.message(dst, b[e.start:e.end], base+int(e.start), f.msg)
		}
		// A singular message that occurs more than once is the merge of
		// its occurrences, which is what parsing their concatenation gives
		// (rare: the one allocating path).
		var cat []byte
		for i := j; i < k; i++ {
			e := s.ents[i]
			cat = append(cat, b[e.start:e.end]...)
		}
		return s.message(dst, cat, base+int(s.ents[j].start), f.msg)
	default: // a scalar: the last occurrence wins; the others are checked
		for i := j; i < k-1; i++ {
			e := s.ents[i]
			out, err := s.scalar(dst, b[e.start:e.end], base+int(e.start), e.wt, mp, f)
			if err != nil {
				return dst, err
			}
			dst = out[:len(dst)]
		}
		e := s.ents[k-1]
		return s.scalar(dst, b[e.start:e.end], base+int(e.start), e.wt, mp, f)
	}
}

// check decodes the occurrences [j, k) of field f without writing them, so
// that a value the row does not show (a oneof member overridden by a later
// one) is still refused when malformed, as protobuf parsers refuse it.
func (s *state) check(dst, b []byte, base int, mp *msgPlan, f *fieldPlan, j, k int) ([]byte, error) {
	out, err := s.value(dst, b, base, mp, f, j, k)
	if err != nil {
		return dst, err
	}
	return out[:len(dst)], nil
}

// element appends the values of one occurrence of repeated field f (one
// value, or a packed run), each preceded by a comma unless it is the first
// (*n counts the values written).
func (s *state) element(dst, v []byte, base int, wt protowire.Type, mp *msgPlan, f *fieldPlan, n *int) ([]byte, error) {
	var err error
	if wt != protowire.BytesType || f.kind == protoreflect.StringKind || f.kind == protoreflect.BytesKind || f.msg != nil {
		if *n > 0 {
			dst = append(dst, ',')
		}
		*n++
		if f.msg != nil {
			return s.message(dst, v, base, f.msg)
		}
		return s.scalar(dst, v, base, wt, mp, f)
	}
	// Packed: a run of varints, fixed32s or fixed64s.
	elt := wireOf(f.kind)
	for i := 0; i < len(v); {
		var m int
		switch elt {
		case protowire.VarintType:
			_, m = protowire.ConsumeVarint(v[i:])
		case protowire.Fixed32Type:
			_, m = protowire.ConsumeFixed32(v[i:])
		default:
			_, m = protowire.ConsumeFixed64(v[i:])
		}
		if m < 0 {
			return dst, &DecodeError{Offset: base + i, Field: string(mp.name) + "." + f.name,
				Reason: "bad packed element", Err: protowire.ParseError(m)}
		}
		if *n > 0 {
			dst = append(dst, ',')
		}
		*n++
		if dst, err = s.scalar(dst, v[i:i+m], base+i, elt, mp, f); err != nil {
			return dst, err
		}
		if len(dst) > s.limit {
			return dst, s.tooBig(base+i, mp)
		}
		i += m
	}
	return dst, nil
}

// mapEntry appends one map entry (a message with key = 1, value = 2; the
// last occurrence of each wins, an absent one is its type's zero value) as
// `"key":value`.
func (s *state) mapEntry(dst, b []byte, base int, mp *msgPlan, f *fieldPlan) ([]byte, error) {
	kf, vf := f.mapKey, f.mapVal
	kStart, kEnd, vStart, vEnd := -1, -1, -1, -1
	var kwt, vwt protowire.Type
	var vcat []byte // value message occurring more than once: merged
	for i := 0; i < len(b); {
		num, wt, n := protowire.ConsumeTag(b[i:])
		if n < 0 || num > protowire.MaxValidNumber {
			return dst, &DecodeError{Offset: base + i, Field: string(mp.name) + "." + f.name,
				Reason: "bad map entry tag", Err: protowire.ParseError(n)}
		}
		cs, vlen, m := consume(num, wt, b[i+n:])
		vs := i + n + cs
		if m < 0 {
			return dst, &DecodeError{Offset: base + i, Field: string(mp.name) + "." + f.name,
				Reason: "bad map entry value", Err: protowire.ParseError(m)}
		}
		switch {
		case num == 1 && wt == wireOf(kf.kind):
			if kStart >= 0 { // overridden: checked, not written
				if err := s.checkScalar(dst, b[kStart:kEnd], base+kStart, kwt, mp, kf); err != nil {
					return dst, err
				}
			}
			kStart, kEnd, kwt = vs, vs+vlen, wt
		case num == 2 && wt == wireOf(vf.kind):
			if vf.msg == nil && vStart >= 0 {
				if err := s.checkScalar(dst, b[vStart:vEnd], base+vStart, vwt, mp, vf); err != nil {
					return dst, err
				}
			}
			if vf.msg != nil && vStart >= 0 {
				if vcat == nil {
					vcat = append(vcat, b[vStart:vEnd]...)
				}
				vcat = append(vcat, b[vs:vs+vlen]...)
			}
			vStart, vEnd, vwt = vs, vs+vlen, wt
		case num == 1 || num == 2:
			return dst, &DecodeError{Offset: base + i, Field: string(mp.name) + "." + f.name,
				Reason: fmt.Sprintf("map entry field %d: wire type %d does not fit", num, wt)}
		default:
			s.unknown++
		}
		i += n + m
	}
	var err error
	if kStart < 0 {
		dst, err = s.zeroKey(dst, kf)
	} else {
		dst, err = s.key(dst, b[kStart:kEnd], base+kStart, kwt, mp, f)
	}
	if err != nil {
		return dst, err
	}
	dst = append(dst, ':')
	switch {
	case vStart < 0:
		return s.zero(dst, vf, base)
	case vcat != nil:
		return s.message(dst, vcat, base+vStart, vf.msg)
	case vf.msg != nil:
		return s.message(dst, b[vStart:vEnd], base+vStart, vf.msg)
	}
	return s.scalar(dst, b[vStart:vEnd], base+vStart, vwt, mp, vf)
}

// checkScalar decodes a scalar without writing it.
func (s *state) checkScalar(dst, v []byte, base int, wt protowire.Type, mp *msgPlan, f *fieldPlan) error {
	_, err := s.scalar(dst[len(dst):], v, base, wt, mp, f)
	return err
}

// key appends a map key as a JSON object key (a string; numbers and bools
// are quoted).
func (s *state) key(dst, v []byte, base int, wt protowire.Type, mp *msgPlan, f *fieldPlan) ([]byte, error) {
	if f.mapKey.kind == protoreflect.StringKind {
		return s.scalar(dst, v, base, wt, mp, f.mapKey)
	}
	dst = append(dst, '"')
	dst, err := s.scalar(dst, v, base, wt, mp, f.mapKey)
	return append(dst, '"'), err
}

func (s *state) zeroKey(dst []byte, kf *fieldPlan) ([]byte, error) {
	switch kf.kind {
	case protoreflect.StringKind:
		return append(dst, `""`...), nil
	case protoreflect.BoolKind:
		return append(dst, `"false"`...), nil
	}
	return append(dst, `"0"`...), nil
}

// zero appends the value an absent field without presence has: proto3's
// zero values, [] for repeated and {} for map fields.
func (s *state) zero(dst []byte, f *fieldPlan, base int) ([]byte, error) {
	switch {
	case f.mapKey != nil:
		return append(dst, '{', '}'), nil
	case f.list:
		return append(dst, '[', ']'), nil
	case f.msg != nil: // only map values: an empty message
		return s.message(dst, nil, base, f.msg)
	}
	switch f.kind {
	case protoreflect.BoolKind:
		return append(dst, "false"...), nil
	case protoreflect.StringKind, protoreflect.BytesKind:
		return append(dst, '"', '"'), nil
	case protoreflect.EnumKind:
		if f.enum.null {
			return append(dst, "null"...), nil
		}
		return append(dst, f.enum.def...), nil
	}
	return append(dst, '0'), nil
}
