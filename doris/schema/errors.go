package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseError is a syntax error in DDL. Its message says what was expected,
// where (line and column, 1-based) and quotes the text there, so it can be
// returned to a MySQL client as is.
type ParseError struct {
	Offset int    // byte offset in the DDL
	Line   int    // 1-based line
	Column int    // 1-based column, in bytes
	Near   string // up to 32 bytes of the DDL starting at Offset
	Msg    string // what is wrong, e.g. `expected "(" after table name`
}

// Error returns e.g. `syntax error at line 1, column 42 near "BUCKET 4": expected BUCKETS`.
func (e *ParseError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("syntax error at line %d, column %d (end of input): %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("syntax error at line %d, column %d near %q: %s", e.Line, e.Column, e.Near, e.Msg)
}

func newParseError(src string, off int, format string, args ...any) *ParseError {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	col := off + 1
	if nl := strings.LastIndexByte(src[:off], '\n'); nl >= 0 {
		col = off - nl
	}
	near := src[off:]
	if len(near) > 32 {
		near = near[:32]
		for len(near) > 0 && !utf8.ValidString(near) {
			near = near[:len(near)-1]
		}
	}
	if nl := strings.IndexByte(near, '\n'); nl >= 0 {
		near = near[:nl]
	}
	return &ParseError{Offset: off, Line: line, Column: col, Near: near, Msg: fmt.Sprintf(format, args...)}
}
