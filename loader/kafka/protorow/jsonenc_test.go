package protorow

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestAppendString: the JSON string decodes back to the input (invalid
// UTF-8 replaced) for inputs around the 8-byte fast path.
func TestAppendString(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "plain ascii text!", "0123456\"", "01234567\\x", strings.Repeat("é", 9),
		"tab\there\x00\x1f\x7f", "bad \xff byte in a longer string", "😀😀😀"} {
		out, bad := appendString(nil, []byte(in), false)
		var got string
		if err := json.Unmarshal(out, &got); err != nil || bad != -1 {
			t.Fatalf("%q → %s: %v", in, out, err)
		}
		if want := strings.ToValidUTF8(in, "\ufffd"); got != want {
			t.Errorf("%q → %s → %q", in, out, got)
		}
	}
	if _, bad := appendString(nil, []byte("01234567\xff"), true); bad != 8 {
		t.Errorf("invalid byte at %d, want 8", bad)
	}
}

func TestAppendFloat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{0, 64, "0"}, {math.Copysign(0, -1), 64, "-0"}, {1e20, 64, "100000000000000000000"}, {1e21, 64, "1e+21"}, {1e-6, 64, "0.000001"},
		{1e-7, 64, "1e-7"}, {float64(float32(0.1)), 32, "0.1"}, {math.MaxFloat64, 64, "1.7976931348623157e+308"},
		{math.NaN(), 64, `"NaN"`}, {math.Inf(1), 32, `"Infinity"`}, {math.Inf(-1), 64, `"-Infinity"`},
	} {
		if got := string(appendFloat(nil, c.f, c.bits)); got != c.want {
			t.Errorf("appendFloat(%v, %d) = %s, want %s", c.f, c.bits, got, c.want)
		}
	}
}

// TestAppendStringEveryPosition: a byte that must be escaped (or is not
// ASCII, or not UTF-8) at every position of strings up to 100 bytes,
// across the 32- and 8-byte fast paths, gives what encoding/json gives
// (without its HTML escaping), and the invalid byte's offset.
func TestAppendStringEveryPosition(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 100; n++ {
		for pos := range n {
			for _, c := range []string{"\"", "\\", "\n", "\x01", "é", "\xff"} {
				in := strings.Repeat("a", pos) + c + strings.Repeat("b", n-pos-1)
				out, bad := appendString(nil, []byte(in), false)
				var got string
				if err := json.Unmarshal(out, &got); err != nil || bad != -1 || got != strings.ToValidUTF8(in, "\ufffd") {
					t.Fatalf("%q → %s → %q, %v", in, out, got, err)
				}
				if _, bad := appendString(nil, []byte(in), true); (c == "\xff") != (bad == pos) {
					t.Fatalf("%q validated: bad %d", in, bad)
				}
			}
		}
	}
}
