package run

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// Review of issue 30: runOutcome made a *kafka.FatalError the whole
// answer, dropping whatever Connector.Run joined to it: the loader's close
// failure (an open transaction it could not abort, a decided checkpoint
// whose commit did not finish) was swallowed. The fatal cause stays
// first, on one line, with the close failure after it.
func TestReviewRunOutcomeKeepsCloseFailure(t *testing.T) {
	t.Parallel()
	fe := &kafka.FatalError{What: "Doris does not know db.t", Fix: "create the table", Err: errors.New("not found")}
	closeErr := errors.New("close loader: abort txn 42 (label doris-sink-j-7): connection refused")
	err := runOutcome(errors.Join(fmtWrap(fe), closeErr), false, &Options{}, slog.New(slog.DiscardHandler), "j", "")
	var got *kafka.FatalError
	if !errors.As(err, &got) || got != fe {
		t.Fatalf("%v: want the *kafka.FatalError kept", err)
	}
	if !strings.Contains(err.Error(), "abort txn 42") || !strings.Contains(err.Error(), "create the table") {
		t.Errorf("%q: want the fatal cause and the close failure", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%q: want one line", err)
	}
	// Alone, the fatal error is the answer as before.
	if err := runOutcome(fmtWrap(fe), false, &Options{}, slog.New(slog.DiscardHandler), "j", ""); err.Error() != "run j: "+fe.Error() {
		t.Errorf("%q", err)
	}
}

// fmtWrap wraps err as the drain does ("drain: ...").
func fmtWrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "drain: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
