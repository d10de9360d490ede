package avrorow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// Issue 25's two poison pills, shared with the fuzz seeds and the
// connector's end-to-end test (testdata/issue25_*.avro hold the payloads).
const (
	// recursiveSchema is a legitimate recursive record.
	recursiveSchema = `{"type":"record","name":"N","fields":[{"name":"n","type":["null","N"]}]}`
	// nullsSchema is an array of zero-width items.
	nullsSchema = `{"type":"record","name":"Z","fields":[{"name":"z","type":{"type":"array","items":"null"}}]}`
)

// deepPayload nests levels records of recursiveSchema (issue 25 item 1:
// 700,000 levels overflowed the goroutine stack, a fatal error).
func deepPayload(levels int) []byte { return append(bytes.Repeat([]byte{2}, levels), 0) }

// nullBlocksPayload is blocks blocks of 2^20 nulls each (issue 25 item 2:
// 4 bytes in, 5 MB of JSON out per block; 1000 blocks ran out of memory).
func nullBlocksPayload(blocks int) []byte {
	var p []byte
	for range blocks {
		p = binary.AppendVarint(p, 1<<20)
	}
	return append(p, 0)
}

// TestIssue25DeepRecursionFails: a value nested past MaxDepth is a
// DecodeError naming the bound, not a stack overflow; one level inside
// the bound decodes.
func TestIssue25DeepRecursionFails(t *testing.T) {
	t.Parallel()
	d, err := New(recursiveSchema, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.AppendJSON([]byte("pre"), deepPayload(700000))
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "nested deeper than 10000") || string(out) != "pre" {
		t.Fatalf("err %v, out %.20q", err, out)
	}
	if len(de.Path) > maxPath+len("…") {
		t.Fatalf("path of %d bytes", len(de.Path))
	}
	if _, err := d.AppendJSON(nil, deepPayload(MaxDepth-1)); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth-1, err)
	}
}

// TestIssue25ZeroWidthItemsFail: a block claiming more null items than the
// record's bytes allow fails at its header, before any item is written.
//
// Not parallel: the allocation bound reads the process-wide TotalAlloc,
// which parallel tests would add to.
func TestIssue25ZeroWidthItemsFail(t *testing.T) {
	d, err := New(nullsSchema, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, blocks := range []int{1, 1000} {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err := d.AppendJSON(nil, nullBlocksPayload(blocks))
		runtime.ReadMemStats(&ms1)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "array and map items") {
			t.Fatalf("%d blocks: err %v", blocks, err)
		}
		if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 1<<20 {
			t.Errorf("%d blocks: allocated %d bytes before failing", blocks, grew)
		}
	}
	// Within the bound: FreeItems nulls in a tiny record decode.
	out, err := d.AppendJSON(nil, append(binary.AppendVarint(nil, FreeItems), 0))
	if err != nil || bytes.Count(out, []byte("null")) != FreeItems {
		t.Fatalf("err %v, %d nulls", err, bytes.Count(out, []byte("null")))
	}
}

// TestRowBound: a row whose JSON would pass MaxRowBytes is a DecodeError
// wrapping ErrRowTooBig (arrays, maps and records are each checked).
func TestRowBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema string }{
		{"array", record(`{"name":"a","type":{"type":"array","items":"string"}}`)},
		{"map", record(`{"name":"a","type":{"type":"map","values":"string"}}`)},
	} {
		d, err := New(tc.schema, nil, Options{MaxRowBytes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var p []byte
		p = binary.AppendVarint(p, 100)
		for range 100 {
			if tc.name == "map" {
				p = append(p, 2, 'k')
			}
			p = append(binary.AppendVarint(p, 20), strings.Repeat("x", 20)...)
		}
		p = append(p, 0)
		if _, err := d.AppendJSON(nil, p); !errors.Is(err, ErrRowTooBig) {
			t.Fatalf("%s: err %v", tc.name, err)
		}
		if _, err := d.AppendJSON(make([]byte, 5000), p[:0:0]); err == nil {
			t.Fatalf("%s: empty payload decoded", tc.name)
		}
	}
	d, err := New(recursiveSchema, nil, Options{MaxRowBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AppendJSON(nil, deepPayload(50)); !errors.Is(err, ErrRowTooBig) {
		t.Fatalf("records: err %v", err)
	}
	// The bound is on the row, not on what dst already holds.
	if _, err := d.AppendJSON(make([]byte, 5000), deepPayload(5)); err != nil {
		t.Fatalf("small row after a long dst: %v", err)
	}
}
