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
}

// String returns the label text "<prefix>:<table-tag>:<scope>:<checkpoint>".
// It does not validate; use Validate (method) first for untrusted fields.
func (l Label) String() string {
	return l.Prefix + ":" + l.TableTag + ":" + l.Scope + ":" + strconv.FormatUint(l.Checkpoint, 10)
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
	return ValidateScope(l.Scope)
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

// Parse splits a label built by Build into its fields. It accepts exactly
// the texts Build can return: four ":"-separated fields, each well formed,
// and the checkpoint in canonical decimal, so Parse(s).String() == s for
// every accepted s. Errors are *Error naming s.
func Parse(s string) (Label, error) {
	if err := Validate(s); err != nil {
		return Label{}, err
	}
	fields := strings.Split(s, ":")
	if len(fields) != 4 {
		return Label{}, &Error{Field: "label", Input: s, Reason: fmt.Sprintf(
			"has %d ':'-separated fields, want 4 (prefix:table-tag:scope:checkpoint)", len(fields))}
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
