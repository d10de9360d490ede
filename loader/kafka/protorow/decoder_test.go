package protorow

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestMessageIndex: the Confluent message-index list selects top-level and
// nested messages; [0] is sent as the single byte 0 (franz-go sr serde).
func TestMessageIndex(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	item := encode(t, message(t, d, "shop.Item", `{"sku":"k","qty":1}`), 1)
	if item[0] != 2 || item[1] != 2 { // count 1, index 1, zig-zag
		t.Fatalf("index list % x, want 02 02", item[:2])
	}
	if got := string(decodeRow(t, d, item)); got != `{"sku":"k","qty":1}` {
		t.Errorf("index [1]: %s", got)
	}
	note := encode(t, message(t, d, "shop.Item.Note", `{"text":"hi"}`), 1, 0)
	if got := string(decodeRow(t, d, note)); got != `{"text":"hi"}` {
		t.Errorf("index [1 0]: %s", got)
	}
	order := encode(t, message(t, d, "shop.Order", `{"i32":1}`), 0)
	if order[0] != 0 {
		t.Fatalf("index [0] not sent as the single byte 0: % x", order[:1])
	}
	if n, err := d.MessageName(1, 0); err != nil || n != "shop.Item.Note" {
		t.Errorf("MessageName(1, 0) = %q, %v", n, err)
	}
}

func TestMessageIndexErrors(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	for _, c := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"empty", nil, "truncated"},
		{"index out of range", []byte{2, 4}, "index 2 out of range (the schema's top level declares 2 messages)"},
		{"nested out of range", []byte{4, 2, 2}, "index 1 out of range (shop.Item declares 1 messages)"},
		{"negative", []byte{2, 1}, "index -1 out of range"},
		{"count too big", []byte{20, 0}, "bad count 10"},
		{"truncated index", []byte{2, 0x80}, "truncated or invalid index"},
	} {
		_, err := d.AppendJSON(nil, c.payload)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a DecodeError containing %q", c.name, err, c.want)
		}
	}
}

// TestReferences: imports resolve from refs; a missing one fails New.
func TestReferences(t *testing.T) {
	t.Parallel()
	if _, err := New(readTestdata(t, "order.proto"), nil, Options{}); err == nil ||
		!strings.Contains(err.Error(), "common/money.proto") {
		t.Errorf("missing reference: %v", err)
	}
	if _, err := New("syntax = \"proto3\"; message A { int32 x = 1 }", nil, Options{}); err == nil {
		t.Error("syntax error accepted")
	}
	if _, err := New(`syntax = "proto3"; enum E { Z = 0; }`, nil, Options{}); err == nil {
		t.Error("a schema without a message accepted")
	}
}

// TestUnknownFieldsSkipped: a record written with a newer schema version
// (an added field) decodes with the older one; the field is counted.
func TestUnknownFieldsSkipped(t *testing.T) {
	t.Parallel()
	v2, err := New(`syntax = "proto3"; package p; message M { int64 id = 1; string added = 2; repeated int32 more = 3; }`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := New(`syntax = "proto3"; package p; message M { int64 id = 1; }`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload := encode(t, message(t, v2, "p.M", `{"id":"3","added":"x","more":[1,2]}`))
	if got := string(decodeRow(t, v1, payload)); got != `{"id":3}` {
		t.Errorf("row %s", got)
	}
	if n := v1.UnknownFields(); n != 2 {
		t.Errorf("UnknownFields = %d, want 2", n)
	}
}

// TestProto2: fields have presence (absent → omitted, not the declared
// default), groups are objects, closed enums render names, invalid UTF-8 in
// a proto2 string is replaced rather than refused.
func TestProto2(t *testing.T) {
	t.Parallel()
	d, err := New(readTestdata(t, "legacy.proto"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := string(decodeRow(t, d, encode(t, message(t, d, "legacy.Event", `{"id":"1","color":"GREEN","extra":{"level":3},"vals":[1,2]}`))))
	if want := `{"id":1,"color":"GREEN","extra":{"level":3},"vals":[1,2]}`; row != want {
		t.Errorf("row %s, want %s", row, want)
	}
	var b []byte
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{'a', 0xff, 'b'})
	if got := string(decodeRow(t, d, append([]byte{0}, b...))); got != `{"label":"a\ufffdb","vals":[]}` {
		t.Errorf("invalid UTF-8 in proto2: %s", got)
	}
}

// TestInvalidUTF8Proto3: proto3 strings must be UTF-8; the error names the
// field and the offset of the bad byte.
func TestInvalidUTF8Proto3(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	b := protowire.AppendTag([]byte{0}, 14, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{'o', 'k', 0xc3})
	_, err := d.AppendJSON(nil, b)
	var de *DecodeError
	if !errors.As(err, &de) || de.Field != "shop.Order.name" || de.Offset != 5 {
		t.Errorf("err %v, want field shop.Order.name at byte 5", err)
	}
}

// TestDecodeErrors: malformed payloads are errors naming the offset (and
// the field when known); dst is returned unchanged.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	truncated := protowire.AppendTag([]byte{0}, 14, protowire.BytesType)
	truncated = protowire.AppendVarint(truncated, 10)
	truncated = append(truncated, "abc"...)
	wrongWire := protowire.AppendTag([]byte{0}, 2, protowire.Fixed32Type)
	wrongWire = protowire.AppendFixed32(wrongWire, 1)
	nested := protowire.AppendTag([]byte{0}, 17, protowire.BytesType)
	nested = protowire.AppendBytes(nested, []byte{0x0a}) // Item.sku's tag, then nothing
	for _, c := range []struct {
		name    string
		payload []byte
		field   string
		offset  int
	}{
		{"truncated string", truncated, "shop.Order.name", 1},
		{"wrong wire type", wrongWire, "shop.Order.i64", 1},
		{"bad tag", []byte{0, 0x80}, "shop.Order", 1},
		{"nested", nested, "shop.Item.sku", 4},
	} {
		dst := []byte("prefix")
		out, err := d.AppendJSON(dst, c.payload)
		var de *DecodeError
		if !errors.As(err, &de) || de.Field != c.field || de.Offset != c.offset {
			t.Errorf("%s: err %v, want field %s at byte %d", c.name, err, c.field, c.offset)
		}
		if !bytes.Equal(out, []byte("prefix")) {
			t.Errorf("%s: dst changed to %q", c.name, out)
		}
	}
}

// TestSingularFieldRepeatedOnTheWire: the last scalar wins; two
// occurrences of a singular message merge (protobuf semantics).
func TestSingularFieldRepeatedOnTheWire(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 17, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "sku1"))
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, 17, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 5))
	f := fields(t, decodeRow(t, d, append([]byte{0}, b...)))
	if f["i32"] != "2" || f["item"] != `{"sku":"sku1","qty":5}` {
		t.Errorf("i32 %s item %s", f["i32"], f["item"])
	}
}

// TestAppendJSONAppends: the row is appended to dst.
func TestAppendJSONAppends(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	out, err := d.AppendJSON([]byte("x\n"), encode(t, message(t, d, "shop.Item", `{"sku":"a"}`), 1))
	if err != nil || string(out) != `x`+"\n"+`{"sku":"a","qty":0}` {
		t.Errorf("%q, %v", out, err)
	}
}

// TestConcurrentAppendJSON: one Decoder serves many goroutines (run with
// -race).
func TestConcurrentAppendJSON(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	payload := encode(t, message(t, d, "shop.Order", `{"i32":1,"items":[{"sku":"a"},{"sku":"b"}],"attrs":{"k":[1,2]},"at":"2024-01-01T00:00:00Z"}`))
	want := decodeRow(t, d, payload)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var buf []byte
			for range 200 {
				var err error
				buf, err = d.AppendJSON(buf[:0], payload)
				if err != nil || !bytes.Equal(buf, want) {
					t.Errorf("got %s, %v", buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestAppendJSONAllocs: the steady state allocates nothing per record.
func TestAppendJSONAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	d := newOrderDecoder(t, Options{})
	payload := encode(t, message(t, d, "shop.Order", `{"i32":1,"name":"n","items":[{"sku":"a"}],"counts":{"a":"1"},
		"attrs":{"k":[1,"x"]},"at":"2024-01-01T00:00:00Z","took":"1.5s","w_i64":"3","points":"2","status":"PAID","db":0.5}`))
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		var err error
		if buf, err = d.AppendJSON(buf[:0], payload); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendJSON allocates %.1f times per record, want 0", n)
	}
}
