package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	want := fullState(t)
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	// Stable snake_case field names are the file's contract.
	for _, key := range []string{`"format"`, `"version"`, `"sha256"`, `"owner"`, `"job"`, `"db"`, `"table"`,
		`"source"`, `"writer"`, `"decided"`, `"id"`, `"label"`, `"txn_id"`, `"start"`, `"end"`, `"empty"`,
		`"decided_at"`, `"committed"`, `"committed_at"`, `"healed"`, `"announced"`, `"at"`, `"next_id"`,
		`"history"`, `"resolved"`, `"checkpoint_id"`, `"assumed"`, `"by"`, `"counts"`, `"rows_total"`,
		`"rows_loaded"`, `"rows_filtered"`, `"rows_unselected"`, `"bytes"`, `"attempts"`, `"dead_lettered"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("encoded file lacks key %s", key)
		}
	}
}

// A store written before Decision.Counts existed (testdata/v1-before-counts.json,
// encoded by that version from fullState without counts) still loads, with
// Counts nil, and is written back as the same format version.
func TestDecodeReadsStoreWithoutCounts(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(filepath.Join("testdata", "v1-before-counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte(`"counts"`)) {
		t.Fatal("golden file has counts; it must be the old format")
	}
	got, err := Decode(old)
	if err != nil {
		t.Fatalf("Decode(old store): %v", err)
	}
	want := fullState(t)
	want.Decided.Counts = nil
	for i := range want.History {
		want.History[i].Counts = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("old store decodes to\n%+v\nwant\n%+v", got, want)
	}
	b, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, old) {
		t.Errorf("re-encoding an old store changed it:\n%s\nwant\n%s", b, old)
	}
}

func TestEncodeRefusesInvalidState(t *testing.T) {
	t.Parallel()
	s := fullState(t)
	s.Decided.TxnID = 0
	var ie *InvariantError
	if _, err := Encode(s); !errors.As(err, &ie) || ie.Checkpoint != 5 {
		t.Fatalf("Encode(invalid) = %v, want *InvariantError for checkpoint 5", err)
	}
}

func TestDecodeRefusesEveryTruncation(t *testing.T) {
	t.Parallel()
	b, err := Encode(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := bytes.TrimRight(b, "\n")
	for n := range len(doc) {
		_, err := Decode(doc[:n])
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("Decode of the first %d of %d bytes = %v, want *CorruptError", n, len(doc), err)
		}
	}
}

// withState re-wraps payload in an envelope with a correct checksum.
func withState(t *testing.T, payload string) []byte {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, []byte(payload)); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.Bytes())
	b, err := json.Marshal(envelope{Format: FormatName, Version: FormatVersion, SHA256: hex.EncodeToString(sum[:]), State: c.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	good, err := Encode(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	bad := fullState(t)
	bad.Decided.TxnID = -3
	badPayload, err := json.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"blank", []byte("  \n"), "empty"},
		{"edited value", bytes.Replace(good, []byte(`"next_id": 8`), []byte(`"next_id": 9`), 1), "checksum mismatch"},
		{"edited checksum", bytes.Replace(good, []byte(`"sha256": "`), []byte(`"sha256": "0`), 1), "checksum mismatch"},
		{"newer version", bytes.Replace(good, []byte(`"version": 1`), []byte(`"version": 2`), 1), "newer doris-sink"},
		{"other format", bytes.Replace(good, []byte(FormatName), []byte("something-else"), 1), "format is"},
		{"unknown envelope field", bytes.Replace(good, []byte(`"version"`), []byte(`"extra": 1, "version"`), 1), "not a complete"},
		{"trailing data", append(bytes.Clone(good), `{}`...), "not a complete"},
		{"not json", []byte("hello"), "not a complete"},
		{"null", []byte("null"), "format is"},
		{"no state", []byte(`{"format":"doris-sink-checkpoint","version":1,"sha256":""}`), "no state"},
		{"unknown state field", withState(t, strings.Replace(string(payload), `"next_id"`, `"mystery":1,"next_id"`, 1)), "fields"},
		{"invariant broken", withState(t, string(badPayload)), "checkpoint 5"},
		{"null state", withState(t, "null"), "invariant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := Decode(c.in)
			var ce *CorruptError
			if !errors.As(err, &ce) || s != nil {
				t.Fatalf("Decode = %v, %v; want *CorruptError", s, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestDecodeIgnoresWhitespace(t *testing.T) {
	t.Parallel()
	b, err := Encode(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	var compact, wide bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&wide, b, " ", "\t\t"); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{compact.Bytes(), wide.Bytes()} {
		if s, err := Decode(in); err != nil || !reflect.DeepEqual(s, fullState(t)) {
			t.Fatalf("Decode(reformatted) = %v", err)
		}
	}
}
