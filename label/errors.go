package label

import "fmt"

// Error is returned for a label, or a label field, that does not follow
// Doris's rule or doris-sink's label format. Use errors.As to inspect it.
type Error struct {
	// Field is what was rejected: "label", "prefix", "table tag", "scope",
	// "checkpoint" or "sub-load".
	Field string
	// Input is the rejected text: the whole label when Field is "label".
	Input string
	// Reason says what is wrong and what is allowed.
	Reason string
}

// Error returns `invalid <field> "<input>": <reason>`.
func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Field, e.Input, e.Reason)
}
