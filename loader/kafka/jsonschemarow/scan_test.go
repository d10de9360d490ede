package jsonschemarow

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// TestCompactValid: the one-pass scanner agrees with json.Valid and
// json.Compact.
func TestCompactValid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, `[]`, `0`, `-0`, `-0.5e+10`, `1E5`, `01`, `1.`, `.5`, `1e`, `-`, `tru`, `nul`, `"x`, `"\x"`, `"\u12G4"`,
		"\"\x01\"", `{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `{"a":1}{}`, ` { "a" : [ 1 , 2 ] } `, `"é\u00e9\/"`,
		"\"a\xffb\"", `[[[]]]`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `{"k":"0123456789abcdef\"0123456789"}`,
	} {
		var want bytes.Buffer
		wantOK := json.Compact(&want, []byte(in)) == nil
		got, ok := compactValid(nil, []byte(in), true)
		if ok != wantOK || ok && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%.40q: %q %v, want %q %v", in, got, ok, want.Bytes(), wantOK)
		}
	}
}

// refStr is the string scan this package had before it used
// jsontext.ScanString (8 plain bytes at a time, then byte by byte): the
// reference its accept set and end index must match.
func refStr(src []byte, i int) (int, bool) {
	plain8 := func(w uint64) bool {
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		q, bs := w^('"'*ones), w^('\\'*ones)
		return ((w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs)&highs == 0
	}
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	i++
	for {
		for i+8 <= len(src) && plain8(binary.LittleEndian.Uint64(src[i:])) {
			i += 8
		}
		if i >= len(src) {
			return i, false
		}
		switch c := src[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(src) {
				return i, false
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(src) {
					return i, false
				}
				for _, h := range src[i+2 : i+6] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
}

// strSeeds put every escape, a control byte, a raw quote, bytes >= 0x80
// and the end of input at many offsets of strings short and long (the
// SWAR steps and the long-string path of jsontext.ScanString).
func strSeeds() [][]byte {
	var out [][]byte
	for _, mid := range []string{`\"`, `\\`, `\/`, `\n`, `\u00e9`, `\u12G4`, `\x`, "\x01", "\x1f", "\x7f", "\x80", "\xff", `"`, `\`, `é`, `\u00`} {
		for at := 0; at <= 150; at += 7 {
			s := strings.Repeat("a", at) + mid + strings.Repeat("b", 150-at)
			out = append(out, []byte(`"`+s+`"`), []byte(`"`+s), []byte(`"`+s+`","x"`))
		}
	}
	return append(out, []byte(`"`+strings.Repeat(`abc\"def\\`, 40)+`"`), []byte(`""`), []byte(`"`))
}

// TestStrMatchesReference: the scanner's string scan (jsontext.ScanString)
// ends where the scan it replaced ended and accepts exactly what it
// accepted, on the seeds.
func TestStrMatchesReference(t *testing.T) {
	t.Parallel()
	for _, in := range strSeeds() {
		checkStr(t, in)
	}
}

// FuzzStrMatchesReference is TestStrMatchesReference on any input, and
// compactValid against encoding/json's Valid and Compact (the accept set
// after the hostile-input bounds: nesting 10000 in both).
func FuzzStrMatchesReference(f *testing.F) {
	for _, in := range strSeeds() {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 0 && in[0] == '"' {
			checkStr(t, in)
		}
		var want bytes.Buffer
		wantOK := json.Compact(&want, in) == nil
		got, ok := compactValid(nil, in, true)
		if ok != wantOK || ok != json.Valid(in) || ok && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactValid(%q) = %q, %v; json.Compact %q, %v", in, got, ok, want.Bytes(), wantOK)
		}
	})
}

func checkStr(t *testing.T, in []byte) {
	t.Helper()
	s := scanner{src: in}
	ok := s.str()
	wantEnd, wantOK := refStr(in, 0)
	if ok != wantOK || ok && s.i != wantEnd {
		t.Fatalf("str(%q) = %d, %v; the reference scan: %d, %v", in, s.i, ok, wantEnd, wantOK)
	}
}
