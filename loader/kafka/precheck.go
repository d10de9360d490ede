package kafka

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Dead-letter reasons of the row pre-check (WithRowCheck): rows Doris
// would filter, found before they are sent.
const (
	// ReasonNotNull: NULL, or no value, for a NOT NULL column without a
	// default.
	ReasonNotNull DeadLetterReason = "not-null"
	// ReasonType: a value that does not parse as its column's type, under
	// strict_mode (or into a NOT NULL column, where the NULL it turns into
	// is refused).
	ReasonType DeadLetterReason = "type"
	// ReasonLength: a string longer than CHAR(n)/VARCHAR(n), in bytes.
	ReasonLength DeadLetterReason = "length"
	// ReasonRange: an integer or decimal out of its column's range (under
	// the same conditions as ReasonType).
	ReasonRange DeadLetterReason = "range"
)

// WithRowCheck makes the Connector check every converted row (formats json
// and debezium) against table t before it is sent, when a dead-letter topic
// is configured: a row Doris would filter is dead-lettered (reason and
// column in its headers) instead of failing the whole checkpoint. props
// are the Stream Load properties (doris.properties): strict_mode selects the
// rules, and a column mapping the check cannot follow (columns, jsonpaths,
// json_root, partial_columns, where, merge_type) turns it off. The rules
// are Doris's (docs/doris-facts.md §12 and the comments in this file); the
// check flags only what Doris certainly refuses, so a row it passes may
// still be refused by Doris (the checkpoint then stops with a
// *RejectedError). nil t: no check.
func WithRowCheck(t *schema.Table, props map[string]string) Opt {
	return optFunc(func(o *options) { o.checkTable, o.checkProps = t, props })
}

// colKind is how the pre-check reads a column's values.
type colKind uint8

const (
	kindOther    colKind = iota // not checked beyond NULL
	kindInt                     // TINYINT … BIGINT: range lo..hi
	kindLargeInt                // LARGEINT: digits only, at most 39
	kindFloat                   // FLOAT, DOUBLE
	kindDecimal                 // DECIMAL(p,s): at most p−s integer digits
	kindString                  // CHAR(n), VARCHAR(n): at most n bytes
)

// colRule is what the pre-check knows of one column.
type colRule struct {
	name   string
	typ    string
	kind   colKind
	lo, hi int64 // kindInt
	intDig int   // kindDecimal: p − s
	scale  int   // kindDecimal: s
	maxLen int   // kindString; 0: unbounded
	// notNull: NOT NULL (a NULL value is refused); required: NOT NULL
	// without a default (a missing value is refused too). Neither for a
	// column that may be AUTO_INCREMENT.
	notNull, required bool
}

// rowCheck checks JSON rows against a table (Connector goroutine only).
// The steady state allocates nothing: keys are looked up with
// string(bytes) map lookups, and the per-row "seen" marks are generation
// stamps in a slice kept between rows.
type rowCheck struct {
	strict  bool
	missing bool // check NOT NULL columns absent from the row
	cols    map[string]int
	rules   []colRule
	seen    []uint32
	gen     uint32
}

// violation is a row the pre-check refuses: the column's rule index and
// the reason (describe builds the text, only on failure).
type violation struct {
	reason DeadLetterReason
	col    int
}

// newRowCheck builds the pre-check for t, or returns nil and why it is off.
func newRowCheck(t *schema.Table, props map[string]string, format string, del DeleteConfig) (*rowCheck, string) {
	if t == nil {
		return nil, "no table schema"
	}
	if format == FormatCSV {
		return nil, "records.format csv: rows are not checked"
	}
	for _, p := range []string{"columns", "jsonpaths", "json_root", "partial_columns", "where", "merge_type"} {
		for k, v := range props {
			if strings.EqualFold(k, p) && strings.TrimSpace(v) != "" {
				return nil, "doris.properties." + p + " maps fields to columns in a way the pre-check does not follow"
			}
		}
	}
	// Deletes carry the key only: with records.delete.* or Debezium
	// envelopes, a missing column is not refused.
	rc := &rowCheck{cols: map[string]int{}, missing: !del.Enabled() && format != FormatDebezium}
	for k, v := range props {
		if strings.EqualFold(k, "strict_mode") {
			rc.strict = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	for _, c := range t.Columns {
		r := colRule{name: c.Name, typ: c.Type, notNull: !c.Nullable, required: !c.Nullable && c.Default == nil}
		base, params := splitType(c.Type)
		switch base {
		case "TINYINT":
			r.kind, r.lo, r.hi = kindInt, -1<<7, 1<<7-1
		case "SMALLINT":
			r.kind, r.lo, r.hi = kindInt, -1<<15, 1<<15-1
		case "INT", "INTEGER":
			r.kind, r.lo, r.hi = kindInt, -1<<31, 1<<31-1
		case "BIGINT":
			r.kind, r.lo, r.hi = kindInt, -1<<63, 1<<63-1
			// AUTO_INCREMENT columns are BIGINT NOT NULL and Doris fills
			// them when a load leaves them out or sends NULL; the schema
			// does not say which columns are: never refuse NULL there.
			r.notNull, r.required = false, false
		case "LARGEINT":
			r.kind = kindLargeInt
		case "FLOAT", "DOUBLE":
			r.kind = kindFloat
		case "DECIMAL", "DECIMALV2", "DECIMALV3":
			p, s := 9, 0 // Doris's DECIMAL default precision and scale
			if len(params) > 0 {
				p, _ = strconv.Atoi(params[0])
			}
			if len(params) > 1 {
				s, _ = strconv.Atoi(params[1])
			}
			if p > 0 && s >= 0 && s <= p {
				r.kind, r.intDig, r.scale = kindDecimal, p-s, s
			}
		case "CHAR", "VARCHAR":
			if len(params) > 0 {
				if n, err := strconv.Atoi(params[0]); err == nil && n > 0 {
					r.kind, r.maxLen = kindString, n
				}
			}
		}
		rc.cols[c.Name] = len(rc.rules)
		rc.rules = append(rc.rules, r)
	}
	rc.seen = make([]uint32, len(rc.rules))
	return rc, ""
}

// splitType splits "DECIMAL(12,2)" into "DECIMAL" and ["12", "2"].
func splitType(t string) (string, []string) {
	i := strings.IndexByte(t, '(')
	if i < 0 || !strings.HasSuffix(t, ")") {
		return t, nil
	}
	parts := strings.Split(t[i+1:len(t)-1], ",")
	for k := range parts {
		parts[k] = strings.TrimSpace(parts[k])
	}
	return t[:i], parts
}

// check returns the first violation of row (a valid JSON object: the
// converter produced it), ok true when there is none.
func (rc *rowCheck) check(row []byte) (v violation, ok bool) {
	rc.gen++
	if rc.gen == 0 { // wrapped: reset the stamps
		clear(rc.seen)
		rc.gen = 1
	}
	escapedKey, isDelete, found := false, false, false
	var first violation
	i := skipSpace(row, 0)
	if i >= len(row) || row[i] != '{' {
		return violation{}, true
	}
	i = skipSpace(row, i+1)
	for i < len(row) && row[i] == '"' {
		kEnd := skipStringFast(row, i)
		key := row[i+1 : kEnd-1]
		col := -1
		if bytes.IndexByte(key, '\\') >= 0 {
			escapedKey = true
		} else if idx, ok := rc.cols[string(key)]; ok { // no allocation
			col = idx
		} else if string(key) == DeleteSignColumn {
			col = -2
		}
		i = skipSpace(row, kEnd)
		if i >= len(row) || row[i] != ':' {
			return violation{}, true
		}
		i = skipSpace(row, i+1)
		if i >= len(row) {
			return violation{}, true
		}
		vStart := i
		if row[i] == '"' {
			i = skipStringFast(row, i)
		} else {
			i = skipValue(row, i)
		}
		switch {
		case col == -2:
			isDelete = i == vStart+1 && row[vStart] == '1'
		case col >= 0:
			rc.seen[col] = rc.gen
			if !found {
				if reason, bad := rc.value(&rc.rules[col], row[vStart:i]); bad {
					first, found = violation{reason: reason, col: col}, true
				}
			}
		}
		i = skipSpace(row, i)
		if i < len(row) && row[i] == ',' {
			i = skipSpace(row, i+1)
		}
	}
	if isDelete {
		// A delete (delete sign 1) carries the key, maybe the before image
		// (Debezium): never refused here.
		return violation{}, true
	}
	if found {
		return first, false
	}
	if rc.missing && !escapedKey {
		// A NOT NULL column without a default that the row leaves out:
		// Doris's JSON reader fills a missing column with its default or
		// NULL, and refuses the row for a NOT NULL column without one
		// ("Column has no default value", apache/doris
		// be/src/vec/exec/format/json/new_json_reader.cpp,
		// _fill_missing_column; docs/doris-facts.md §12), in both modes.
		for k := range rc.rules {
			if rc.rules[k].required && rc.seen[k] != rc.gen {
				return violation{reason: ReasonNotNull, col: k}, false
			}
		}
	}
	return violation{}, true
}

// value checks one JSON value v (raw) of column r: the reason and true when
// Doris refuses it.
func (rc *rowCheck) value(r *colRule, v []byte) (DeadLetterReason, bool) {
	if v[0] == 'n' { // null
		// NULL into a NOT NULL column is refused in both modes ("null value
		// for not null column", apache/doris
		// be/src/vec/sink/vtablet_block_convertor.cpp,
		// OlapTableBlockConvertor::_validate_column).
		return ReasonNotNull, r.notNull
	}
	if r.kind == kindOther {
		return "", false
	}
	var text []byte
	quoted := v[0] == '"'
	switch {
	case quoted:
		text = v[1 : len(v)-1]
	case v[0] == '{' || v[0] == '[':
		if r.kind == kindString {
			return "", false // Doris's text of a nested value is not the input's: not checked
		}
		return rc.typeFailure(r, ReasonType)
	case v[0] == 't' || v[0] == 'f':
		if r.kind == kindString {
			return "", false
		}
		return "", false // booleans read as 1/0: valid numbers
	default:
		text = v
	}
	switch r.kind {
	case kindString:
		// A string longer than CHAR(n)/VARCHAR(n) in bytes is refused in
		// both modes ("the length of input is too long than schema",
		// apache/doris be/src/vec/sink/vtablet_block_convertor.cpp,
		// OlapTableBlockConvertor::_validate_column).
		n := len(text)
		if quoted && bytes.IndexByte(text, '\\') >= 0 {
			n = unescapedLen(text)
		}
		return ReasonLength, n > r.maxLen
	case kindInt:
		switch intText(text, r.lo, r.hi) {
		case textBad:
			return rc.typeFailure(r, ReasonType)
		case textOutOfRange:
			return rc.typeFailure(r, ReasonRange)
		}
	case kindLargeInt:
		if intText(text, 0, 0) == textBad {
			return rc.typeFailure(r, ReasonType)
		}
		if d := digitCount(text); d > 39 {
			return rc.typeFailure(r, ReasonRange)
		}
	case kindFloat:
		if !floatText(text) {
			return rc.typeFailure(r, ReasonType)
		}
	case kindDecimal:
		switch decimalText(text, r.intDig, r.scale) {
		case textBad:
			return rc.typeFailure(r, ReasonType)
		case textOutOfRange:
			return rc.typeFailure(r, ReasonRange)
		}
	}
	return "", false
}

// typeFailure: a value that cannot be converted to the column's type is
// refused under strict_mode; without it Doris loads NULL instead, which a
// NOT NULL column refuses (docs/doris-facts.md §12, regression suite
// test_stream_load_strict_mode_and_filter_ratio.groovy).
func (rc *rowCheck) typeFailure(r *colRule, reason DeadLetterReason) (DeadLetterReason, bool) {
	return reason, rc.strict || r.notNull
}

// describe says what the violation is, for the dead letter's error.
func (rc *rowCheck) describe(v violation) string {
	r := rc.rules[v.col]
	switch v.reason {
	case ReasonNotNull:
		return fmt.Sprintf("column %s %s NOT NULL has no default: the row gives it no value or NULL (Doris refuses it)", r.name, r.typ)
	case ReasonLength:
		return fmt.Sprintf("column %s %s: the string is longer than %d bytes (Doris refuses it in any mode)", r.name, r.typ, r.maxLen)
	case ReasonRange:
		return fmt.Sprintf("column %s %s: the value is out of range (%s)", r.name, r.typ, rc.mode(r))
	}
	return fmt.Sprintf("column %s %s: the value does not parse as %s (%s)", r.name, r.typ, r.typ, rc.mode(r))
}

func (rc *rowCheck) mode(r colRule) string {
	if rc.strict {
		return "strict_mode refuses it"
	}
	return "it would load as NULL, which the NOT NULL column refuses"
}

// RowRejectedError is the cause of a dead letter the pre-check made: the
// row converted from the record would be refused by Doris.
type RowRejectedError struct {
	// Reason is the rule; Column the column it failed on.
	Reason DeadLetterReason
	Column string
	// Detail says what is wrong.
	Detail string
}

// Error names the column and the rule.
func (e *RowRejectedError) Error() string { return "Doris would refuse the row: " + e.Detail }

// rejectRow dead-letters r, whose row Doris would refuse (v, found by
// check).
func (c *Connector) rejectRow(ctx context.Context, r *kgo.Record, check *rowCheck, v violation) error {
	rr := &RowRejectedError{Reason: v.reason, Column: check.rules[v.col].name, Detail: check.describe(v)}
	rerr := &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Format: c.cfg.Format, Err: rr}
	return c.deadLetter(ctx, r, v.reason, rr.Column, rerr)
}

// refusedPrefix starts the error text (HeaderError) of a row Doris refused.
const refusedPrefix = "refused by Doris at precommit: "

// screenRefused dead-letters r when bisection found (or a decision
// recorded) that Doris refuses its row (c.refused). done is true when r
// was dead-lettered (or that failed: err).
func (c *Connector) screenRefused(ctx context.Context, r *kgo.Record) (done bool, err error) {
	why, ok := c.refusedRow(r)
	if !ok {
		return false, nil
	}
	rerr := &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Format: c.cfg.Format,
		Err: fmt.Errorf("%s%s", refusedPrefix, why)}
	return true, c.deadLetter(ctx, r, ReasonRejected, dorisColumn(why), rerr)
}

// screen dead-letters r instead of writing its row to table ("":
// doris.table) when the table's pre-check refuses row. done is true when
// r was dead-lettered (or that failed: err).
func (c *Connector) screen(ctx context.Context, r *kgo.Record, row []byte, table string) (done bool, err error) {
	check := c.checkFor(ctx, table)
	if check == nil {
		return false, nil
	}
	if v, ok := check.check(row); !ok {
		return true, c.rejectRow(ctx, r, check, v)
	}
	return false, nil
}
