package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: arbitrary bytes never panic Decode, and are either refused
// with a *CorruptError or decode to a valid state whose encoding is stable.
// Seeds: testdata/fuzz/FuzzDecode, the golden stores of every format
// version in testdata, and the files below.
func FuzzDecode(f *testing.F) {
	full, err := Encode(fullState(f))
	if err != nil {
		f.Fatal(err)
	}
	fresh, err := Encode(NewState(testOwner))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add(fresh)
	for _, golden := range []string{"v1-before-counts.json", "v1-with-counts.json", "v2-two-tables.json", "v2-sub-loads.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(full[:len(full)/2])
	f.Add([]byte(`{"format":"doris-sink-checkpoint","version":1,"sha256":"","state":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || s != nil {
				t.Fatalf("Decode error %v (state %v) is not a *CorruptError with a nil state", err, s)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Decode accepted an invalid state: %v", err)
		}
		enc, err := Encode(s)
		if err != nil {
			t.Fatalf("Encode of a decoded state: %v", err)
		}
		s2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(s)): %v", err)
		}
		enc2, err := Encode(s2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable: %v\n%s\n%s", err, enc, enc2)
		}
	})
}
