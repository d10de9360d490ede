package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// File format identifiers written in every store file.
const (
	// FormatName is the "format" field of a store file.
	FormatName = "doris-sink-checkpoint"
	// FormatVersion is the "version" field this package writes. Version 2
	// added a decision's txns (Decision.Txns, one per table) and the table
	// of announcements and resolutions.
	FormatVersion = 2
	// OldestFormatVersion is the oldest version Decode still reads: a
	// version-1 store decodes as single-table decisions (one Txn each).
	OldestFormatVersion = 1
)

// envelope is the store file: the state payload with its checksum.
type envelope struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	SHA256  string          `json:"sha256"`
	State   json.RawMessage `json:"state"`
}

// Encode validates s and returns the store file content: a JSON document
// {"format", "version", "sha256", "state"}, indented for reading, where
// sha256 is the lower-case hex SHA-256 of the compact JSON of state (the
// canonical payload; whitespace changes keep it valid, any other edit does
// not).
//
// A state holding version-1 forms (a decision without Txns) is written in
// the version-2 form (State.normalize); s itself is not changed.
func Encode(s *State) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.Clone()
	s.normalize()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint state: %w", err)
	}
	sum := sha256.Sum256(payload)
	b, err := json.MarshalIndent(envelope{
		Format: FormatName, Version: FormatVersion, SHA256: hex.EncodeToString(sum[:]), State: payload,
	}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint file: %w", err)
	}
	return append(b, '\n'), nil
}

// Decode parses store file content written by Encode and validates it. Any
// defect is a *CorruptError (with an empty Path): empty or truncated input,
// unknown fields, trailing data, another format or version, a checksum
// mismatch, or a state breaking an invariant (wrapping *InvariantError).
func Decode(b []byte) (*State, error) {
	s, err := decode(b)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func decode(b []byte) (*State, *CorruptError) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, &CorruptError{Reason: fmt.Sprintf("empty (%d bytes; truncated by a crash or an incomplete copy?)", len(b))}
	}
	var env envelope
	if err := decodeStrict(b, &env); err != nil {
		return nil, &CorruptError{Reason: "not a complete store document (truncated or edited?)", Err: err}
	}
	if env.Format != FormatName {
		return nil, &CorruptError{Reason: fmt.Sprintf("format is %q, want %q", env.Format, FormatName)}
	}
	if env.Version < OldestFormatVersion || env.Version > FormatVersion {
		why := "unknown"
		if env.Version > FormatVersion {
			why = "written by a newer doris-sink; upgrade to read it"
		}
		return nil, &CorruptError{Reason: fmt.Sprintf("format version %d, this doris-sink reads versions %d to %d (%s)",
			env.Version, OldestFormatVersion, FormatVersion, why)}
	}
	if len(env.State) == 0 {
		return nil, &CorruptError{Reason: "no state"}
	}
	var payload bytes.Buffer
	if err := json.Compact(&payload, env.State); err != nil {
		return nil, &CorruptError{Reason: "state is not valid JSON", Err: err}
	}
	sum := sha256.Sum256(payload.Bytes())
	if got := hex.EncodeToString(sum[:]); got != env.SHA256 {
		return nil, &CorruptError{Reason: fmt.Sprintf("checksum mismatch: file says sha256 %q, state hashes to %q "+
			"(partially written or edited by hand)", env.SHA256, got)}
	}
	var s State
	if err := decodeStrict(payload.Bytes(), &s); err != nil {
		return nil, &CorruptError{Reason: "state does not match this version's fields", Err: err}
	}
	if env.Version == 1 {
		if f := s.version2Field(); f != "" {
			return nil, &CorruptError{Reason: "version-1 state holds the version-2 field " + f + " (edited by hand?)"}
		}
	}
	if err := s.Validate(); err != nil {
		return nil, &CorruptError{Reason: "state breaks an invariant", Err: err}
	}
	s.normalize()
	if err := s.Validate(); err != nil {
		return nil, &CorruptError{Reason: "state breaks an invariant", Err: err}
	}
	return &s, nil
}

// version2Field names a field of s that format version 1 did not have,
// "" when there is none.
func (s *State) version2Field() string {
	ds := append([]Decision(nil), s.History...)
	if s.Decided != nil {
		ds = append(ds, *s.Decided)
	}
	for _, d := range ds {
		if d.Txns != nil {
			return "txns"
		}
	}
	for _, a := range s.Announced {
		if a.Table != "" {
			return "announced.table"
		}
	}
	for _, r := range s.Resolved {
		if r.Table != "" {
			return "resolved.table"
		}
	}
	return ""
}

// decodeStrict decodes exactly one JSON value with no unknown fields and
// nothing but whitespace after it.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("unexpected data after the document at byte %d", dec.InputOffset())
	}
	return nil
}
