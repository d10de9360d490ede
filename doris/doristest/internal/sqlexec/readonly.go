package sqlexec

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// ErrNotReadOnly is returned (wrapped) for a statement that would change
// data or schema. The emulator's tables change only through Stream Load
// (docs/doris-facts.md §1) and the MySQL front's DDL handling, never through this
// engine.
var ErrNotReadOnly = errors.New("only read-only statements (SELECT, WITH … SELECT) are supported here; load data with Stream Load")

// checkReadOnly refuses, with a readable error, a statement whose first
// keyword is not SELECT or WITH. It is the friendly front of the read-only
// rule; the authorizer (readOnlyAuthorizer) enforces it inside SQLite.
func checkReadOnly(query string) error {
	kw := strings.ToUpper(firstKeyword(query))
	switch kw {
	case "SELECT", "WITH", "VALUES":
		if hasSecondStatement(query) {
			return errors.New("one statement per query: multiple statements are not supported")
		}
		return nil
	case "":
		return errors.New("empty query")
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "MERGE", "LOAD":
		return fmt.Errorf("%s: %w", kw, ErrNotReadOnly)
	default:
		return fmt.Errorf("%s statements are not supported by the emulator's SELECT engine: %w", kw, ErrNotReadOnly)
	}
}

// firstKeyword returns the first word of query, skipping blanks, comments
// (-- …, # …, /* … */) and opening parentheses.
func firstKeyword(q string) string {
	q = skipComments(q, " \t\r\n(")
	end := strings.IndexFunc(q, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end < 0 {
		return q
	}
	return q[:end]
}

// hasSecondStatement reports whether anything but blanks, comments and
// semicolons follows the first top-level semicolon of q. It skips string
// literals, quoted identifiers ("…", `…`, […]) and comments.
func hasSecondStatement(q string) bool {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'', '"', '`':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1 // a doubled quote is two adjacent literals here: same effect
		case '[':
			j := strings.IndexByte(q[i+1:], ']')
			if j < 0 {
				return false
			}
			i += j + 1
		case '-', '#', '/':
			switch {
			case c == '-' && strings.HasPrefix(q[i:], "--"), c == '#':
				j := strings.IndexByte(q[i:], '\n')
				if j < 0 {
					return false
				}
				i += j
			case c == '/' && strings.HasPrefix(q[i:], "/*"):
				j := strings.Index(q[i+2:], "*/")
				if j < 0 {
					return false
				}
				i += j + 3
			}
		case ';':
			return stripComments(q[i+1:]) != ""
		}
	}
	return false
}

// stripComments drops leading comments, blanks and semicolons from s.
func stripComments(s string) string { return skipComments(s, " \t\r\n;") }

// skipComments drops from s every leading comment (-- …, # …, /* … */) and
// every leading character in blanks.
func skipComments(s, blanks string) string {
	for {
		s = strings.TrimLeft(s, blanks)
		switch {
		case strings.HasPrefix(s, "--"), strings.HasPrefix(s, "#"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s, "*/")
			if i < 0 {
				return ""
			}
			s = s[i+2:]
		default:
			return s
		}
	}
}

// readOnlyAuthorizer lets user statements read tables and call functions
// and nothing else; internal statements (syncing tables) run with user false.
func readOnlyAuthorizer(user func() bool) sqlite.AuthorizerFn {
	return func(action sqlite.AuthorizerActionCode, _, _, _, _ string) sqlite.AuthorizerReturnCode {
		if !user() {
			return sqlite.AuthorizerOK
		}
		switch action {
		case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthFunction, sqlite.AuthRecursive:
			return sqlite.AuthorizerOK
		}
		return sqlite.AuthorizerDeny
	}
}
