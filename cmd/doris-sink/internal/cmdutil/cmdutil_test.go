package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitError},
		{FlagErrorf("bad flag"), ExitUsage},
		{fmt.Errorf("wrapped: %w", &config.KeyError{Key: "k", Value: "v", Allowed: "a"}), ExitConfig},
		{&CheckFailedError{Failed: 2}, ExitCheckFailed},
		{&GapsError{Gaps: 1}, ExitGaps},
		{&NotConfirmedError{Action: "x"}, ExitNotConfirmed},
		{fmt.Errorf("run: %w", context.Canceled), ExitInterrupted},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestTableTTYAndPiped(t *testing.T) {
	t.Parallel()
	for _, tty := range []bool{true, false} {
		io, out, _ := TestStreams("", tty)
		tb := NewTable(io, "id", "label")
		tb.AddRow("1", "a:b")
		tb.AddRow("22", "tab\there")
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		want := "ID  LABEL\n1   a:b\n22  tab here\n"
		if !tty {
			want = "1\ta:b\n22\ttab here\n"
		}
		if out.String() != want {
			t.Errorf("tty=%v:\n%q\nwant\n%q", tty, out.String(), want)
		}
	}
}

func TestConfirm(t *testing.T) {
	t.Parallel()
	io, _, _ := TestStreams("", false)
	var ne *NotConfirmedError
	if err := Confirm(io, false, "commit"); !errors.As(err, &ne) || ne.Interactive {
		t.Errorf("non-TTY without --yes: %v", err)
	}
	if err := Confirm(io, true, "commit"); err != nil {
		t.Errorf("--yes: %v", err)
	}
	io, _, errOut := TestStreams("yes\n", true)
	if err := Confirm(io, false, "commit"); err != nil || errOut.Len() == 0 {
		t.Errorf("TTY yes: %v, prompt %q", err, errOut)
	}
	io, _, _ = TestStreams("n\n", true)
	if err := Confirm(io, false, "commit"); !errors.As(err, &ne) || !ne.Interactive {
		t.Errorf("TTY no: %v", err)
	}
}

func TestOutputFlagRejectsUnknown(t *testing.T) {
	t.Parallel()
	var p string
	v := outputValue{&p}
	if err := v.Set("yaml"); err == nil {
		t.Error("yaml accepted")
	}
	if err := v.Set("json"); err != nil || p != OutputJSON {
		t.Errorf("json: %v %q", err, p)
	}
}
