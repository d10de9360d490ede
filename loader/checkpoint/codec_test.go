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
		`"rows_loaded"`, `"rows_filtered"`, `"rows_unselected"`, `"bytes"`, `"attempts"`, `"dead_lettered"`,
		`"txns"`} { // "sub" is omitted while 0, the only value this version writes
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("encoded file lacks key %s", key)
		}
	}
}

// A store written before Decision.Counts existed (testdata/v1-before-counts.json,
// encoded by that version from legacyFullState without counts) still loads,
// with Counts nil and each decision one Txn of the owner's table, and is
// written back as format version 2.
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
	want := legacyFullState(t)
	want.Decided.Counts = nil
	for i := range want.History {
		want.History[i].Counts = nil
	}
	want.normalize() // each decision is one Txn of the owner's table
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("old store decodes to\n%+v\nwant\n%+v", got, want)
	}
	if d := got.Decided; len(d.Txns) != 1 || d.Txns[0].Table != "demo.orders" || d.Txns[0].Label != d.Label ||
		d.Txns[0].TxnID != 1005 || !d.Txns[0].Committed || d.Txns[0].Healed != 2 || len(got.History[0].Txns) != 0 {
		t.Fatalf("old decision decodes to txns %+v (history %+v)", d.Txns, got.History)
	}
	// It is written back as version 2, which decodes to the same state.
	b, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"version": 2`)) || !bytes.Contains(b, []byte(`"txns"`)) {
		t.Errorf("re-encoding an old store did not write version 2:\n%s", b)
	}
	again, err := Decode(b)
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("Decode(Encode(old)) = %v, %v; want %+v", again, err, got)
	}
}

// Every stored golden store of an older version keeps decoding: the
// version-1 file with counts (testdata/v1-with-counts.json, written by
// the last version-1 doris-sink from legacyFullState) decodes to its
// version-2 form.
func TestDecodeReadsVersion1WithCounts(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(filepath.Join("testdata", "v1-with-counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(old)
	if err != nil {
		t.Fatalf("Decode(v1 store): %v", err)
	}
	want := legacyFullState(t)
	want.normalize()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("v1 store decodes to\n%+v\nwant\n%+v", got, want)
	}
	if c := got.Decided.Txns[0].Counts; c == nil || c.RowsLoaded != 9 || c.DeadLettered != 0 || got.Decided.Counts.DeadLettered != 3 {
		t.Fatalf("v1 counts become txn counts %+v, decision counts %+v", c, got.Decided.Counts)
	}
}

// The version-2 golden file (testdata/v2-two-tables.json, fullState)
// decodes to fullState and re-encodes byte for byte: the format is stable.
func TestDecodeReadsVersion2Golden(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("testdata", "v2-two-tables.json")
	b, err := Encode(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CHECKPOINT_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(old)
	if err != nil || !reflect.DeepEqual(got, fullState(t)) {
		t.Fatalf("Decode(golden) = %+v, %v", got, err)
	}
	if !bytes.Equal(b, old) {
		t.Errorf("encoding fullState differs from %s:\n%s", golden, b)
	}
}

// A version-1 envelope holding a version-2 field is refused: version 1
// never wrote one.
func TestDecodeRefusesVersion2FieldsInVersion1(t *testing.T) {
	t.Parallel()
	payload, err := json.Marshal(fullState(t))
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, payload); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.Bytes())
	b, err := json.Marshal(envelope{Format: FormatName, Version: 1, SHA256: hex.EncodeToString(sum[:]), State: c.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := Decode(b); !errors.As(err, &ce) || !strings.Contains(err.Error(), "version-2 field txns") {
		t.Fatalf("Decode(v1 with txns) = %v, want *CorruptError naming txns", err)
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
		{"newer version", bytes.Replace(good, []byte(`"version": 2`), []byte(`"version": 3`), 1), "newer doris-sink"},
		{"version zero", bytes.Replace(good, []byte(`"version": 2`), []byte(`"version": 0`), 1), "reads versions 1 to 2"},
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
