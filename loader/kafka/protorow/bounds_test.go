package protorow

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// wideSchema's Z writes 40 zero values when empty: 2 payload bytes per
// repeated item expand to about 400 bytes of JSON.
func wideSchema() string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage t;\nmessage E { repeated Z z = 1; }\nmessage Z {\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "  int64 field_number_%d = %d;\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestRowBound: a row whose JSON would pass MaxRowBytes is a DecodeError
// wrapping ErrRowTooBig, however few payload bytes it takes.
func TestRowBound(t *testing.T) {
	t.Parallel()
	d, err := New(wideSchema(), nil, Options{MaxRowBytes: 10000})
	if err != nil {
		t.Fatal(err)
	}
	payload := append([]byte{0}, bytes.Repeat([]byte{0x0a, 0}, 100)...)
	if _, err := d.AppendJSON(nil, payload); !errors.Is(err, ErrRowTooBig) {
		t.Fatalf("err %v", err)
	}
	if _, err := d.AppendJSON(make([]byte, 20000), payload[:11]); err != nil {
		t.Fatalf("5 items after a long dst: %v", err)
	}
}

// nested is levels messages of N{N n = 1;} inside each other.
func nested(levels int) []byte {
	sizes := make([]int, levels) // sizes[i]: the bytes inside level i (0 innermost)
	for i := 1; i < levels; i++ {
		sizes[i] = 1 + protowire.SizeVarint(uint64(sizes[i-1])) + sizes[i-1]
	}
	b := []byte{0}
	for i := levels - 1; i >= 0; i-- {
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.BytesType), uint64(sizes[i]))
	}
	return b
}

// TestDepthBound: 10000 levels decode within a few MiB of stack; one more
// is a DecodeError.
func TestDepthBound(t *testing.T) {
	d, err := New("syntax = \"proto3\";\nmessage N { N n = 1; }\n", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AppendJSON(nil, nested(maxDepth+1)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("err %v", err)
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	done := make(chan error)
	go func() {
		_, err := d.AppendJSON(nil, nested(maxDepth-1))
		runtime.ReadMemStats(&ms1)
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d levels: stack in use grew %d bytes", maxDepth-1, int64(ms1.StackInuse)-int64(ms0.StackInuse))
}
