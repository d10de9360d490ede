package label

import (
	"fmt"
	"strconv"
	"strings"
)

// Label is a parsed doris-sink label. The zero value is not a valid label.
type Label struct {
	Prefix     string // job name
	TableTag   string // TableTag(db, table)
	Scope      string // writer instance, "0" standalone
	Checkpoint uint64 // checkpoint id
	// Sub is the sub-load index within the table's checkpoint, in
	// [0, MaxSubLoads): 0 is the one load of a table without sub-loads, and
	// its label has no sub field (the format before sub-loads).
	Sub int
}

// MaxSubLoads bounds the sub-loads of one table in one checkpoint: a sub
// index is at most 3 digits.
const MaxSubLoads = 256

// String returns the label text "<prefix>:<table-tag>:<scope>:<checkpoint>",
// followed by ":<sub>" when Sub is not 0. It does not validate; use
// Validate (method) first for untrusted fields.
func (l Label) String() string {
	s := l.Prefix + ":" + l.TableTag + ":" + l.Scope + ":" + strconv.FormatUint(l.Checkpoint, 10)
	if l.Sub != 0 {
		s += ":" + strconv.Itoa(l.Sub)
	}
	return s
}

// Validate reports whether every field of l is well formed, so that
// l.String() is a label Doris accepts and Parse returns l for it.
func (l Label) Validate() error {
	if err := ValidatePrefix(l.Prefix); err != nil {
		return err
	}
	if !validTableTag(l.TableTag) {
		return &Error{Field: "table tag", Input: l.TableTag, Reason: fmt.Sprintf(
			"want db-table of [A-Za-z0-9_] (at most %d characters) or h + %d lower-case hex digits, as TableTag returns",
			MaxTableTagLen, hashTagHexLen)}
	}
	if err := ValidateScope(l.Scope); err != nil {
		return err
	}
	if l.Sub < 0 || l.Sub >= MaxSubLoads {
		return &Error{Field: "sub-load", Input: strconv.Itoa(l.Sub), Reason: fmt.Sprintf("want 0 to %d", MaxSubLoads-1)}
	}
	if s := l.String(); len(s) > MaxLen {
		return &Error{Field: "label", Input: s, Reason: fmt.Sprintf(
			"%d characters, Doris allows at most %d; a sub-load label of a long prefix, scope and checkpoint "+
				"needs the hashed table tag (BuildSub uses it)", len(s), MaxLen)}
	}
	return nil
}

// Build returns the label of checkpoint for table db.table written by the
// writer instance scope of job prefix. The result always passes Validate
// and Parse returns its fields. The error names the offending field.
func Build(prefix, db, table, scope string, checkpoint uint64) (string, error) {
	l := Label{Prefix: prefix, TableTag: TableTag(db, table), Scope: scope, Checkpoint: checkpoint}
	if err := l.Validate(); err != nil {
		return "", fmt.Errorf("build label for %s.%s checkpoint %d: %w", db, table, checkpoint, err)
	}
	return l.String(), nil
}

// BuildSub returns the label of sub-load sub of checkpoint for table
// db.table (docs/design.md §3). Sub-load 0 is Build's label, byte for
// byte. Another sub-load appends ":<sub>"; when that label would exceed
// MaxLen (a long prefix, scope and checkpoint with a verbatim table tag)
// the table tag takes its hashed form (HashTableTag), which always fits:
// the label stays deterministic from its inputs. sub must be in
// [0, MaxSubLoads).
func BuildSub(prefix, db, table, scope string, checkpoint uint64, sub int) (string, error) {
	if sub == 0 {
		return Build(prefix, db, table, scope, checkpoint)
	}
	l := Label{Prefix: prefix, TableTag: TableTag(db, table), Scope: scope, Checkpoint: checkpoint, Sub: sub}
	if len(l.String()) > MaxLen {
		l.TableTag = HashTableTag(db, table)
	}
	if err := l.Validate(); err != nil {
		return "", fmt.Errorf("build label for %s.%s checkpoint %d sub-load %d: %w", db, table, checkpoint, sub, err)
	}
	return l.String(), nil
}

// Parse splits a label built by Build or BuildSub into its fields. It
// accepts exactly the texts they can return: four ":"-separated fields
// (sub-load 0), or five with a sub-load index in [1, MaxSubLoads), each
// well formed, numbers in canonical decimal, so Parse(s).String() == s for
// every accepted s. Errors are *Error naming s.
func Parse(s string) (Label, error) {
	if err := Validate(s); err != nil {
		return Label{}, err
	}
	fields := strings.Split(s, ":")
	if len(fields) != 4 && len(fields) != 5 {
		return Label{}, &Error{Field: "label", Input: s, Reason: fmt.Sprintf(
			"has %d ':'-separated fields, want 4 (prefix:table-tag:scope:checkpoint) or 5 (…:sub-load)", len(fields))}
	}
	l := Label{Prefix: fields[0], TableTag: fields[1], Scope: fields[2]}
	if err := l.Validate(); err != nil {
		return Label{}, &Error{Field: "label", Input: s, Reason: err.Error()}
	}
	cp, err := parseCheckpoint(fields[3])
	if err != nil {
		return Label{}, &Error{Field: "label", Input: s, Reason: err.Error()}
	}
	l.Checkpoint = cp
	if len(fields) == 5 {
		sub, err := parseCheckpoint(fields[4])
		if err == nil && (sub == 0 || sub >= MaxSubLoads) {
			err = fmt.Errorf("sub-load %d: want 1 to %d (sub-load 0 has no sub field)", sub, MaxSubLoads-1)
		}
		if err != nil {
			return Label{}, &Error{Field: "label", Input: s, Reason: err.Error()}
		}
		l.Sub = int(sub)
		if err := l.Validate(); err != nil {
			return Label{}, &Error{Field: "label", Input: s, Reason: err.Error()}
		}
	}
	return l, nil
}

// parseCheckpoint accepts canonical decimal uint64 text only.
func parseCheckpoint(f string) (uint64, error) {
	bad := func(why string) error {
		return &Error{Field: "checkpoint", Input: f, Reason: why + "; want a decimal uint64 without sign or leading zeros"}
	}
	if f == "" {
		return 0, bad("empty")
	}
	if len(f) > 1 && f[0] == '0' {
		return 0, bad("leading zero")
	}
	for i := 0; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return 0, bad(fmt.Sprintf("character %q at byte %d is not a digit", f[i], i))
		}
	}
	cp, err := strconv.ParseUint(f, 10, 64)
	if err != nil {
		return 0, bad("out of range")
	}
	return cp, nil
}
