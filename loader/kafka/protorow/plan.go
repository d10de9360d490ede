package protorow

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// wkt names a well-known type that is not rendered field by field.
type wkt uint8

const (
	wktNone      wkt = iota
	wktTimestamp     // google.protobuf.Timestamp: DATETIME(6) text
	wktDuration      // google.protobuf.Duration: seconds as a decimal number
	wktWrapper       // google.protobuf.*Value wrappers: the wrapped value
	wktStruct        // google.protobuf.Struct: a JSON object
	wktValue         // google.protobuf.Value: any JSON value
	wktList          // google.protobuf.ListValue: a JSON array
	wktDecimal       // confluent.type.Decimal: a JSON number with its scale
	wktDate          // google.type.Date: "YYYY-MM-DD"
	wktTimeOfDay     // google.type.TimeOfDay: "HH:MM:SS.ffffff"
)

// msgPlan is what the walker needs to know about one message type, computed
// once in New so that decoding does no descriptor look-ups or allocation.
// Plans are immutable after New and shared by concurrent AppendJSON calls.
type msgPlan struct {
	name   protoreflect.FullName
	fields []fieldPlan // in field-number order
	// byNum maps a field number to its index in fields (-1: unknown) when
	// the numbers are dense enough; otherwise sparse is used.
	byNum  []int32
	sparse map[int32]int32
	// oneofs is the number of real (non-synthetic) oneofs; fieldPlan.oneof
	// indexes them.
	oneofs int
	wkt    wkt
	// nested are the plans of the message types declared inside this one,
	// in declaration order (the Confluent message index addresses them).
	nested []*msgPlan
}

// fieldPlan describes one field.
type fieldPlan struct {
	num  int32
	name string
	key  []byte // `"name":`
	kind protoreflect.Kind
	list bool
	// presence: an absent singular field is omitted from the row (message
	// fields, oneof members, proto3 optional, proto2 fields); without it an
	// absent field is written with its default value (proto3 implicit presence).
	presence bool
	// oneof is the index of the field's real oneof, or -1.
	oneof int
	// utf8 is whether a string must be valid UTF-8 (proto3 and editions'
	// default); otherwise invalid bytes are replaced by U+FFFD.
	utf8 bool
	// msg is the plan of a message or group field (or of a map entry).
	msg *msgPlan
	// mapKey and mapVal are the key and value fields of a map entry.
	mapKey, mapVal *fieldPlan
	// enum holds the quoted JSON names of an enum's values.
	enum *enumPlan
}

// enumPlan renders enum numbers as their names.
type enumPlan struct {
	dense  [][]byte // quoted names by number when 0 <= number < len(dense)
	sparse map[int32][]byte
	// def is the quoted name of the value written for an absent implicit
	// enum field (number 0).
	def []byte
	// null: google.protobuf.NullValue, always written as JSON null.
	null bool
}

func (e *enumPlan) name(n int32) []byte {
	if n >= 0 && int(n) < len(e.dense) {
		if b := e.dense[n]; b != nil {
			return b
		}
		return nil
	}
	return e.sparse[n]
}

// planner builds plans for a file's messages and everything they reach,
// sharing one plan per message type (recursive types point to themselves).
type planner struct {
	plans map[protoreflect.FullName]*msgPlan
}

func newPlanner() *planner { return &planner{plans: map[protoreflect.FullName]*msgPlan{}} }

// message returns the plan of md, building it (and the plans it reaches) on
// first use.
func (p *planner) message(md protoreflect.MessageDescriptor) (*msgPlan, error) {
	if mp, ok := p.plans[md.FullName()]; ok {
		return mp, nil
	}
	mp := &msgPlan{name: md.FullName(), wkt: wellKnown(md.FullName())}
	p.plans[md.FullName()] = mp
	real := map[protoreflect.FullName]int{}
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		if !od.IsSynthetic() {
			real[od.FullName()] = len(real)
		}
	}
	mp.oneofs = len(real)
	fds := md.Fields()
	maxNum := int32(0)
	for i := range fds.Len() {
		fp, err := p.field(fds.Get(i), real)
		if err != nil {
			return nil, err
		}
		mp.fields = append(mp.fields, fp)
		maxNum = max(maxNum, fp.num)
	}
	slices.SortFunc(mp.fields, func(a, b fieldPlan) int { return int(a.num) - int(b.num) })
	if int(maxNum) <= 4*len(mp.fields)+64 {
		mp.byNum = make([]int32, maxNum+1)
		for i := range mp.byNum {
			mp.byNum[i] = -1
		}
		for i, f := range mp.fields {
			mp.byNum[f.num] = int32(i)
		}
	} else {
		mp.sparse = make(map[int32]int32, len(mp.fields))
		for i, f := range mp.fields {
			mp.sparse[f.num] = int32(i)
		}
	}
	for i := range md.Messages().Len() {
		nmd := md.Messages().Get(i)
		np, err := p.message(nmd)
		if err != nil {
			return nil, err
		}
		mp.nested = append(mp.nested, np)
	}
	return mp, nil
}

// lookup returns the index of field number num in mp.fields, or -1.
func (mp *msgPlan) lookup(num int32) int32 {
	if mp.byNum != nil {
		if num >= 0 && int(num) < len(mp.byNum) {
			return mp.byNum[num]
		}
		return -1
	}
	if i, ok := mp.sparse[num]; ok {
		return i
	}
	return -1
}

func (p *planner) field(fd protoreflect.FieldDescriptor, real map[protoreflect.FullName]int) (fieldPlan, error) {
	fp := fieldPlan{
		num:      int32(fd.Number()),
		name:     string(fd.Name()),
		key:      quote(string(fd.Name())),
		kind:     fd.Kind(),
		list:     fd.IsList(),
		presence: fd.HasPresence(),
		oneof:    -1,
		utf8:     fd.Kind() == protoreflect.StringKind && fd.ParentFile().Syntax() != protoreflect.Proto2,
	}
	fp.key = append(fp.key, ':')
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		fp.oneof = real[od.FullName()]
	}
	if fd.IsMap() {
		k, err := p.field(fd.MapKey(), nil)
		if err != nil {
			return fp, err
		}
		v, err := p.field(fd.MapValue(), nil)
		if err != nil {
			return fp, err
		}
		fp.mapKey, fp.mapVal = &k, &v
		fp.list = false
		fp.kind = protoreflect.MessageKind
		return fp, nil
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		mp, err := p.message(fd.Message())
		if err != nil {
			return fp, fmt.Errorf("field %s: %w", fd.FullName(), err)
		}
		fp.msg = mp
	case protoreflect.EnumKind:
		fp.enum = newEnumPlan(fd.Enum())
	}
	return fp, nil
}

func newEnumPlan(ed protoreflect.EnumDescriptor) *enumPlan {
	e := &enumPlan{null: ed.FullName() == "google.protobuf.NullValue"}
	vals := ed.Values()
	maxN := int32(-1)
	dense := true
	for i := range vals.Len() {
		n := int32(vals.Get(i).Number())
		if n < 0 {
			dense = false
		}
		maxN = max(maxN, n)
	}
	if int(maxN) > 4*vals.Len()+64 {
		dense = false
	}
	if dense {
		e.dense = make([][]byte, maxN+1)
	} else {
		e.sparse = make(map[int32][]byte, vals.Len())
	}
	// The first value declared with a number wins (aliases share a number).
	for i := range vals.Len() {
		v := vals.Get(i)
		n := int32(v.Number())
		q := quote(string(v.Name()))
		if dense {
			if e.dense[n] == nil {
				e.dense[n] = q
			}
		} else if _, ok := e.sparse[n]; !ok {
			e.sparse[n] = q
		}
	}
	e.def = e.name(0)
	if e.def == nil { // proto2 enums need not have a zero: the first value is the default
		e.def = quote(string(vals.Get(0).Name()))
	}
	return e
}

func wellKnown(n protoreflect.FullName) wkt {
	switch n {
	case "google.protobuf.Timestamp":
		return wktTimestamp
	case "google.protobuf.Duration":
		return wktDuration
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return wktWrapper
	case "google.protobuf.Struct":
		return wktStruct
	case "google.protobuf.Value":
		return wktValue
	case "google.protobuf.ListValue":
		return wktList
	case "confluent.type.Decimal":
		return wktDecimal
	case "google.type.Date":
		return wktDate
	case "google.type.TimeOfDay":
		return wktTimeOfDay
	}
	return wktNone
}
