package kafka

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 25: a reason quoting text from Doris, Kafka or the registry with
// an ESC sequence or a newline reaches the doris-sink-error header and the
// RecordError text escaped (\x1b, \n), never raw (on main both were raw).
func TestDeadLetterErrorHeaderEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	c := &Connector{}
	c.cfg.DeadLetterTopic = "dl"
	rerr := &RecordError{Topic: "t", Partition: 1, Offset: 7, Format: "json",
		Err: errors.New("Doris said: \x1b[2J\x1b]0;owned\x07\nforged-header: yes")}
	dl, _ := c.deadLetterRecord(&kgo.Record{Topic: "t", Partition: 1, Offset: 7, Value: []byte("{}")}, "refused", "", rerr)
	var got []byte
	for _, h := range dl.Headers {
		if h.Key == HeaderError {
			got = h.Value
		}
	}
	if got == nil || bytes.ContainsAny(got, "\x1b\x07\n") || !bytes.Contains(got, []byte(`\x1b[2J`)) || !bytes.Contains(got, []byte(`\nforged`)) {
		t.Fatalf("%s header %q, want the control characters escaped", HeaderError, got)
	}
	if msg := rerr.Error(); strings.ContainsAny(msg, "\x1b\x07\n") {
		t.Fatalf("RecordError text %q holds raw control characters", msg)
	}
}
