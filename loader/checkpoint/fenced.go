package checkpoint

import "errors"

// ErrFenced is wrapped by the errors of a Store whose writer incarnation
// was fenced: another process opened the same store (the same job and
// writer scope) after this one and owns it now. A fenced store never
// becomes usable again; the caller must stop without retrying and without
// deciding anything more (the newer incarnation resolves what this one
// left open). The Kafka coordinator log (loader/kafka/coordlog) returns it
// when the producer epoch was bumped by a newer incarnation.
var ErrFenced = errors.New("checkpoint store fenced by a newer writer incarnation")

// CheckTransition reports whether next may replace prev in a store without
// moving it backwards (the rule FileStore.Save and Memory.Save apply): an
// *InvariantError when next_id, the decided checkpoint or its commit would
// go back. A nil prev accepts any next. Store implementations outside this
// package call it before writing.
func CheckTransition(prev, next *State) error {
	return checkTransition(prev, next)
}
