package run

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// Issue 10 finding 3: run's logger reaches the Doris client (whose
// warnings, retryablehttp's lines among them, were dropped), and every
// line it writes is redacted.
func TestRunGivesTheDorisClientItsRedactingLogger(t *testing.T) {
	t.Parallel()
	io, _, errOut := cmdutil.TestStreams("", false)
	stop := errors.New("stop after the client")
	var got *slog.Logger
	f := &cmdutil.Factory{IO: io, NewDoris: func(_ *config.Config, log *slog.Logger) (*doris.Client, error) {
		got = log
		return nil, stop
	}}
	opts := &Options{IO: io, Factory: f, Signals: make(chan os.Signal),
		loadConfig: func() (*config.Config, error) { return &config.Config{Log: config.Log{Level: "info"}}, nil }}
	if err := Run(t.Context(), opts); !errors.Is(err, stop) {
		t.Fatalf("Run: %v", err)
	}
	if got == nil {
		t.Fatal("the Doris client got no logger")
	}
	got.Info("redirect", // info: run's log.level, not the warn-only stderr logger of other commands
		"to", "http://root:s3cret@be:8040/api", "err", errors.New("Authorization: Basic cm9vdDpzM2NyZXQ="))
	if out := errOut.String(); !strings.Contains(out, "redirect") || strings.Contains(out, "s3cret") || strings.Contains(out, "cm9vdDpzM2NyZXQ=") {
		t.Fatalf("run's log: %q", out)
	}
}
