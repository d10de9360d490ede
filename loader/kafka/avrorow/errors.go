package avrorow

import (
	"errors"
	"fmt"
	"strings"
)

// ErrShort is wrapped by a DecodeError when the payload ends inside a
// value.
var ErrShort = errors.New("payload ends inside a value")

// ErrRowTooBig is wrapped by a DecodeError when the row's JSON would pass
// Options.MaxRowBytes.
var ErrRowTooBig = errors.New("row too big")

// maxPath bounds DecodeError.Path: a value nested MaxDepth deep would
// otherwise build a path of every level (and copy it at each one).
const maxPath = 256

// DecodeError is a payload that does not decode with the schema.
type DecodeError struct {
	// Path is the field path from the top-level record, e.g. "a.b[2]";
	// empty for the record itself.
	Path string
	// Offset is the byte offset in the payload where decoding failed.
	Offset int
	// Err says what is wrong.
	Err error
}

// Error names the field, the offset and the reason.
func (e *DecodeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("avro payload byte %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("avro field %s at payload byte %d: %v", e.Path, e.Offset, e.Err)
}

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// inField prefixes the error's path with a record field name (the error
// path only: decoding allocates nothing while it succeeds).
func inField(err error, name string) error { return prefixPath(err, name) }

// inElem prefixes the path with an array index or map key.
func inElem(err error, elem string) error { return prefixPath(err, elem) }

// prefixPath prefixes the path of err's DecodeError with part; a path
// past maxPath keeps its innermost part, after "…".
func prefixPath(err error, part string) error {
	var de *DecodeError
	if !errors.As(err, &de) || strings.HasPrefix(de.Path, "…") {
		return err
	}
	if len(de.Path)+len(part)+1 > maxPath {
		de.Path = "…" + de.Path
		return err
	}
	if de.Path == "" || strings.HasPrefix(de.Path, "[") {
		de.Path = part + de.Path
	} else {
		de.Path = part + "." + de.Path
	}
	return err
}
