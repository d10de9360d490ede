package avrorow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// Review of issue 25: a decimal's bytes were turned into digits before
// its precision was checked, so one record holding a 1 MiB decimal cost
// seconds of CPU (big.Int to decimal text: 4 s measured) and megabytes of
// garbage before failing its precision. Its byte count alone shows it
// cannot fit: it fails before any digit is made.
func TestReviewHugeDecimalFailsBeforeConverting(t *testing.T) {
	for _, schema := range []string{
		`{"type":"bytes","logicalType":"decimal","precision":38,"scale":2}`,
		`{"type":"fixed","name":"F","size":65536,"logicalType":"decimal","precision":38,"scale":2}`,
	} {
		d, err := New(`{"type":"record","name":"R","fields":[{"name":"x","type":`+schema+`}]}`, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		big := bytes.Repeat([]byte{0x5a}, 64<<10)
		payload := big
		if strings.Contains(schema, `"bytes"`) {
			payload = append(binary.AppendVarint(nil, int64(len(big))), big...)
		}
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err = d.AppendJSON(nil, payload)
		runtime.ReadMemStats(&ms1)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "precision 38") {
			t.Fatalf("%s: err %v, want a DecodeError naming precision 38", schema, err)
		}
		if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 16<<10 {
			t.Errorf("%s: allocated %d bytes before failing a 64 KiB decimal of precision 38", schema, grew)
		}
	}
	// A decimal at its precision, with redundant sign bytes, still decodes.
	d, err := New(`{"type":"record","name":"R","fields":[{"name":"x","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":0}}]}`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{append(make([]byte, 30), 0x01), `{"x":"1"}`},
		{append(bytes.Repeat([]byte{0xff}, 30), 0xff), `{"x":"-1"}`},
		{append(make([]byte, 30), bytes.Repeat([]byte{0x7f}, 15)...), ``},
	} {
		out, err := d.AppendJSON(nil, append(binary.AppendVarint(nil, int64(len(c.b))), c.b...))
		if c.want == "" {
			// 15 bytes of 0x7f.. is a 36-digit number: it fits precision 38.
			if err != nil || len(out) != len(`{"x":""}`)+36 {
				t.Errorf("15-byte decimal: %s, %v", out, err)
			}
			continue
		}
		if err != nil || string(out) != c.want {
			t.Errorf("%x: %s, %v, want %s", c.b, out, err, c.want)
		}
	}
}
