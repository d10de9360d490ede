package jsonschemarow

import "github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"

// maxNesting is encoding/json's nesting limit.
const maxNesting = 10000

// scanner checks that src is one valid JSON value (the grammar of RFC 8259
// as encoding/json accepts it: any byte >= 0x80 inside strings) and, with
// emit, appends it without the whitespace outside strings. It is
// json.Valid plus json.Compact in one pass, with an 8-byte fast path over
// string contents and no allocation.
type scanner struct {
	src   []byte
	i     int
	start int // first byte not yet copied to dst
	dst   []byte
	emit  bool
	depth int
}

// compactValid returns dst with src compacted and true, or dst unchanged
// and false when src is not one valid JSON value.
func compactValid(dst, src []byte, emit bool) ([]byte, bool) {
	s := scanner{src: src, dst: dst, emit: emit}
	s.space()
	if !s.value() {
		return dst, false
	}
	s.space()
	if s.i != len(src) {
		return dst, false
	}
	s.flush(s.i)
	return s.dst, true
}

func (s *scanner) flush(end int) {
	if s.emit {
		s.dst = append(s.dst, s.src[s.start:end]...)
	}
}

// space skips whitespace, leaving it out of the copy.
func (s *scanner) space() {
	if s.i < len(s.src) && !isSpace(s.src[s.i]) {
		return
	}
	s.flush(s.i)
	for s.i < len(s.src) && isSpace(s.src[s.i]) {
		s.i++
	}
	s.start = s.i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) value() bool {
	if s.i >= len(s.src) {
		return false
	}
	switch c := s.src[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *scanner) object() bool {
	if s.depth++; s.depth > maxNesting {
		return false
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.src) && s.src[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.src) || s.src[s.i] != '"' || !s.str() {
			return false
		}
		s.space()
		if s.i >= len(s.src) || s.src[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value() {
			return false
		}
		if closed, ok := s.next('}'); !ok || closed {
			return ok
		}
	}
}

func (s *scanner) array() bool {
	if s.depth++; s.depth > maxNesting {
		return false
	}
	s.i++ // '['
	s.space()
	if s.i < len(s.src) && s.src[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !s.value() {
			return false
		}
		if closed, ok := s.next(']'); !ok || closed {
			return ok
		}
	}
}

// next reads what follows a member or element of an object or array
// whose closing byte is close: a ',' (then closed is false) or close
// (closed, one level up); ok is false on anything else.
func (s *scanner) next(close byte) (closed, ok bool) {
	s.space()
	if s.i >= len(s.src) {
		return false, false
	}
	switch s.src[s.i] {
	case ',':
		s.i++
		s.space()
		return false, true
	case close:
		s.i++
		s.depth--
		return true, true
	}
	return false, false
}

// str scans the string literal at s.i (jsontext.ScanString: what
// encoding/json accepts, bytes >= 0x80 as they are).
func (s *scanner) str() bool {
	end, ok := jsontext.ScanString(s.src, s.i)
	s.i = end
	return ok
}

func (s *scanner) lit(w string) bool {
	if len(s.src)-s.i < len(w) || string(s.src[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *scanner) number() bool {
	if s.src[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.src) {
		return false
	}
	if s.src[s.i] == '0' {
		s.i++
	} else if !s.digits() {
		return false
	}
	if s.i < len(s.src) && s.src[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.src) && (s.src[s.i] == 'e' || s.src[s.i] == 'E') {
		s.i++
		if s.i < len(s.src) && (s.src[s.i] == '+' || s.src[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more digits.
func (s *scanner) digits() bool {
	j := s.i
	for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' {
		s.i++
	}
	return s.i > j
}
