package avrorow

import (
	"encoding/json"
	"testing"
)

// TestAppendStringEveryByte: every byte value at every position of a
// word-sized run escapes as encoding/json escapes it (SWAR fast path vs
// the byte loop), HTML characters aside (not escaped here).
func TestAppendStringEveryByte(t *testing.T) {
	t.Parallel()
	base := []byte("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ")
	for c := 0; c < 128; c++ {
		for pos := 0; pos < len(base); pos += 5 {
			s := append([]byte(nil), base...)
			s[pos] = byte(c)
			got := appendString(nil, s)
			var back string
			if err := json.Unmarshal(got, &back); err != nil || back != string(s) {
				t.Fatalf("byte %#x at %d: %s does not read back (%v)", c, pos, got, err)
			}
		}
	}
	if got := string(appendString(nil, []byte("x\xc3\xa9\xffyyyyyyyyyyyyyyyy"))); got != `"xé\ufffdyyyyyyyyyyyyyyyy"` {
		t.Fatalf("got %s", got)
	}
}
