package protorow

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

type fieldCase struct {
	name, js, key, want string
}

func runFieldCases(t *testing.T, d *Decoder, cases []fieldCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := orderField(t, d, c.js, c.key); got != c.want {
				t.Errorf("%s: %s = %s, want %s", c.js, c.key, got, c.want)
			}
		})
	}
}

// TestIntegers: every integer kind is a JSON number (int64 and uint64 are
// not quoted as protojson does, so BIGINT and LARGEINT columns take them).
func TestIntegers(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"int32", `{"i32":-5}`, "i32", "-5"},
		{"int64 min", `{"i64":"-9223372036854775808"}`, "i64", "-9223372036854775808"},
		{"uint32 max", `{"u32":4294967295}`, "u32", "4294967295"},
		{"uint64 max", `{"u64":"18446744073709551615"}`, "u64", "18446744073709551615"},
		{"sint32", `{"s32":-2147483648}`, "s32", "-2147483648"},
		{"sint64", `{"s64":"-9223372036854775807"}`, "s64", "-9223372036854775807"},
		{"fixed32", `{"f32":4294967295}`, "f32", "4294967295"},
		{"fixed64", `{"f64":"18446744073709551615"}`, "f64", "18446744073709551615"},
		{"sfixed32", `{"sf32":-7}`, "sf32", "-7"},
		{"sfixed64", `{"sf64":"-9000000000000000000"}`, "sf64", "-9000000000000000000"},
	})
}

// TestFloats: shortest round-trip text; NaN and ±Infinity as the strings
// Doris's float parser accepts.
func TestFloats(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"float", `{"fl":1.5}`, "fl", "1.5"},
		{"float shortest", `{"fl":0.1}`, "fl", "0.1"},
		{"double", `{"db":0.1}`, "db", "0.1"},
		{"double big", `{"db":1e21}`, "db", "1e+21"},
		{"double small", `{"db":1e-7}`, "db", "1e-7"},
		{"double NaN", `{"db":"NaN"}`, "db", `"NaN"`},
		{"double +Inf", `{"db":"Infinity"}`, "db", `"Infinity"`},
		{"float -Inf", `{"fl":"-Infinity"}`, "fl", `"-Infinity"`},
		{"repeated doubles", `{"dbls":[1,"NaN",-2.5]}`, "dbls", `[1,"NaN",-2.5]`},
	})
}

func TestBoolStringBytes(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"bool", `{"ok":true}`, "ok", "true"},
		{"string escapes", `{"name":"a\"b\\c\n\t\u0001é😀"}`, "name", `"a\"b\\c\n\t\u0001é😀"`},
		{"bytes base64", `{"raw":"AAH/"}`, "raw", `"AAH/"`},
	})
}

// TestEnums: the value name; a number the schema does not know (open
// proto3 enum) stays a number.
func TestEnums(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"name", `{"status":"SHIPPED"}`, "status", `"SHIPPED"`},
		{"unknown number", `{"status":42}`, "status", "42"},
		{"repeated", `{"statuses":["PAID",7,"STATUS_UNSPECIFIED"]}`, "statuses", `["PAID",7,"STATUS_UNSPECIFIED"]`},
	})
}

func TestNestedMessages(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"message", `{"item":{"sku":"A-1","qty":3}}`, "item", `{"sku":"A-1","qty":3}`},
		{"empty message", `{"item":{}}`, "item", `{"sku":"","qty":0}`},
		{"imported message", `{"price":{"currency":"EUR","units":"12"}}`, "price", `{"currency":"EUR","units":12}`},
	})
	d := newOrderDecoder(t, Options{})
	row := decodeRow(t, d, encode(t, message(t, d, "shop.Order", `{"parent":{"i32":1,"parent":{"i32":2}}}`)))
	parent := fields(t, []byte(fields(t, row)["parent"]))
	if parent["i32"] != "1" || fields(t, []byte(parent["parent"]))["i32"] != "2" {
		t.Errorf("recursive message: %s", row)
	}
}

// TestRepeated: arrays, packed (the proto3 default) and unpacked, and
// either encoding accepted for either declaration.
func TestRepeated(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	runFieldCases(t, d, []fieldCase{
		{"packed", `{"nums":["1","-2","3"]}`, "nums", "[1,-2,3]"},
		{"unpacked", `{"unpacked":["4","5"]}`, "unpacked", "[4,5]"},
		{"strings", `{"tags":["a","b"]}`, "tags", `["a","b"]`},
		{"messages", `{"items":[{"sku":"x"},{"qty":2}]}`, "items", `[{"sku":"x","qty":0},{"sku":"","qty":2}]`},
	})
	// nums (18) sent unpacked and unpacked (19) sent packed, interleaved
	// with another field between two runs of the same field.
	var b []byte
	b = protowire.AppendTag(b, 18, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 19, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 7), 8))
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 9)
	b = protowire.AppendTag(b, 18, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 2), 3))
	f := fields(t, decodeRow(t, d, append([]byte{0}, b...)))
	if f["nums"] != "[1,2,3]" || f["unpacked"] != "[7,8]" || f["i32"] != "9" {
		t.Errorf("mixed encodings: nums %s unpacked %s i32 %s", f["nums"], f["unpacked"], f["i32"])
	}
}

// TestMaps: map fields are objects; integer and bool keys are quoted.
func TestMaps(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"string keys", `{"counts":{"a":"1"}}`, "counts", `{"a":1}`},
		{"int keys, message values", `{"by_id":{"-3":{"sku":"s"}}}`, "by_id", `{"-3":{"sku":"s","qty":0}}`},
		{"bool keys", `{"flags":{"true":"yes"}}`, "flags", `{"true":"yes"}`},
	})
	// An entry without key or value: both are their zero values.
	d := newOrderDecoder(t, Options{})
	var b []byte
	b = protowire.AppendTag(b, 23, protowire.BytesType)
	b = protowire.AppendBytes(b, nil)
	if got := fields(t, decodeRow(t, d, append([]byte{0}, b...)))["by_id"]; got != `{"0":{"sku":"","qty":0}}` {
		t.Errorf("empty map entry: %s", got)
	}
}

// TestOneof: the member that is set; when a producer wrote two members the
// last one wins, as in every protobuf parser; unset members are omitted.
func TestOneof(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	runFieldCases(t, d, []fieldCase{
		{"set", `{"points":"0"}`, "points", "0"},
		{"other member omitted", `{"points":"5"}`, "card", "<absent>"},
	})
	var b []byte
	b = protowire.AppendTag(b, 25, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, 24, protowire.BytesType)
	b = protowire.AppendString(b, "visa")
	f := fields(t, decodeRow(t, d, append([]byte{0}, b...)))
	if _, ok := f["points"]; ok || f["card"] != `"visa"` {
		t.Errorf("two members: points %q card %q, want only card", f["points"], f["card"])
	}
}

// TestPresence: proto3 fields without presence are written with their
// zero value when absent; fields with presence are omitted.
func TestPresence(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	f := fields(t, decodeRow(t, d, []byte{0})) // an empty Order
	want := map[string]string{
		"i32": "0", "u64": "0", "fl": "0", "ok": "false", "name": `""`, "raw": `""`, "status": `"STATUS_UNSPECIFIED"`,
		"nums": "[]", "items": "[]", "counts": "{}", "flags": "{}",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("absent %s = %q, want %q", k, f[k], v)
		}
	}
	for _, k := range []string{"opt", "item", "card", "points", "at", "w_i64", "attrs", "price", "parent"} {
		if v, ok := f[k]; ok {
			t.Errorf("absent field %s with presence written as %s, want omitted", k, v)
		}
	}
	runFieldCases(t, d, []fieldCase{{"optional set to zero", `{"opt":0}`, "opt", "0"}})
}

// TestTimestamp: DATETIME(6) text in Options.TimeZone, nanoseconds
// truncated to microseconds.
func TestTimestamp(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"UTC default", `{"at":"2024-02-29T23:59:58.123456789Z"}`, "at", `"2024-02-29 23:59:58.123456"`},
		{"epoch", `{"at":"1970-01-01T00:00:00Z"}`, "at", `"1970-01-01 00:00:00.000000"`},
		{"min", `{"at":"0001-01-01T00:00:00Z"}`, "at", `"0001-01-01 00:00:00.000000"`},
	})
	runFieldCases(t, newOrderDecoder(t, Options{TimeZone: time.FixedZone("UTC+8", 8*3600)}), []fieldCase{
		{"zone", `{"at":"2024-02-29T23:59:58.5Z"}`, "at", `"2024-03-01 07:59:58.500000"`},
	})
	// Out of range seconds: an error naming the field.
	d := newOrderDecoder(t, Options{})
	ts := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(maxTimestampSec+1))
	b := protowire.AppendBytes(protowire.AppendTag([]byte{0}, 27, protowire.BytesType), ts)
	_, err := d.AppendJSON(nil, b)
	var de *DecodeError
	if !errors.As(err, &de) || de.Field != "google.protobuf.Timestamp" || de.Offset != 4 {
		t.Errorf("out of range timestamp: %v", err)
	}
	// 0001-01-01 in a zone west of UTC is year 0: still a Doris DATETIME.
	west := newOrderDecoder(t, Options{TimeZone: time.FixedZone("UTC-5", -5*3600)})
	if got := orderField(t, west, `{"at":"0001-01-01T00:00:00Z"}`, "at"); got != `"0000-12-31 19:00:00.000000"` {
		t.Errorf("year 0: %s", got)
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"fraction", `{"took":"90.5s"}`, "took", "90.5"},
		{"negative nanos", `{"took":"-1.000000001s"}`, "took", "-1.000000001"},
		{"sub-second negative", `{"took":"-0.25s"}`, "took", "-0.25"},
		{"zero", `{"took":"0s"}`, "took", "0"},
	})
}

// TestWrappers: the wrapped value; a wrapper present with its default
// value (an empty message) is that value; an absent wrapper is omitted.
func TestWrappers(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		{"int64", `{"w_i64":"-12"}`, "w_i64", "-12"},
		{"int64 zero", `{"w_i64":"0"}`, "w_i64", "0"},
		{"string", `{"w_str":"x"}`, "w_str", `"x"`},
		{"bool", `{"w_bool":false}`, "w_bool", "false"},
		{"double NaN", `{"w_dbl":"NaN"}`, "w_dbl", `"NaN"`},
		{"absent", `{}`, "w_i64", "<absent>"},
	})
}

// TestStructValue: Struct, Value and ListValue are the JSON they hold.
func TestStructValue(t *testing.T) {
	t.Parallel()
	runFieldCases(t, newOrderDecoder(t, Options{}), []fieldCase{
		// One key per Struct: proto.Marshal writes map entries in random order.
		{"struct", `{"attrs":{"b":[true,null,"x",1]}}`, "attrs", `{"b":[true,null,"x",1]}`},
		{"nested struct", `{"attrs":{"c":{"d":"e"}}}`, "attrs", `{"c":{"d":"e"}}`},
		{"empty struct", `{"attrs":{}}`, "attrs", `{}`},
		{"value number", `{"any_value":2.5}`, "any_value", "2.5"},
		{"value null", `{"any_value":null}`, "any_value", "null"},
		{"value list", `{"any_value":[1,"a"]}`, "any_value", `[1,"a"]`},
		{"list", `{"list":[{"k":false}]}`, "list", `[{"k":false}]`},
	})
	// A Value message with no kind set is null.
	d := newOrderDecoder(t, Options{})
	b := protowire.AppendBytes(protowire.AppendTag([]byte{0}, 32, protowire.BytesType), nil)
	if got := fields(t, decodeRow(t, d, b))["any_value"]; got != "null" {
		t.Errorf("empty Value: %s", got)
	}
}

// TestOtherWellKnownTypes: Any and Empty are objects of their fields.
func TestOtherWellKnownTypes(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	anyMsg := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "type.googleapis.com/shop.Item")
	anyMsg = protowire.AppendBytes(protowire.AppendTag(anyMsg, 2, protowire.BytesType), []byte{0x0a, 0x01, 'x'})
	b := protowire.AppendBytes(protowire.AppendTag([]byte{0}, 41, protowire.BytesType), anyMsg)
	b = protowire.AppendBytes(protowire.AppendTag(b, 42, protowire.BytesType), nil)
	f := fields(t, decodeRow(t, d, b))
	if f["extra"] != `{"type_url":"type.googleapis.com/shop.Item","value":"CgF4"}` || f["nothing"] != "{}" {
		t.Errorf("extra %s nothing %s", f["extra"], f["nothing"])
	}
}

// TestEditions: an edition 2023 schema compiles; its fields have explicit
// presence by default, so an absent one is omitted.
func TestEditions(t *testing.T) {
	t.Parallel()
	d, err := New(`edition = "2023"; package e; message M { int32 a = 1; string s = 2; repeated int32 r = 3; }`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(decodeRow(t, d, encode(t, message(t, d, "e.M", `{"a":0,"r":[1,2]}`)))); got != `{"a":0,"r":[1,2]}` {
		t.Errorf("row %s", got)
	}
}
