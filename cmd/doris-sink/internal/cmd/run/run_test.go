package run

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

func TestNewCmdRunParsesConfigFlag(t *testing.T) {
	t.Parallel()
	io, _, _ := cmdutil.TestStreams("", false)
	var got *Options
	cmd := NewCmdRun(&cmdutil.Factory{IO: io}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-c", "orders.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.ConfigFile != "orders.yaml" || got.loadConfig == nil {
		t.Fatalf("options = %+v, want ConfigFile orders.yaml and a config loader", got)
	}
}

// A signal caught by main's signal context before Run listened (ctx
// already cancelled) stops Run before it loads anything; exit 130.
func TestRunInterruptedBeforeStart(t *testing.T) {
	t.Parallel()
	io, _, _ := cmdutil.TestStreams("", false)
	loaded := false
	opts := &Options{IO: io, Factory: &cmdutil.Factory{IO: io}, Signals: make(chan os.Signal),
		loadConfig: func() (*config.Config, error) { loaded = true; return nil, errors.New("unreached") }}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := Run(ctx, opts)
	if !errors.Is(err, context.Canceled) || loaded {
		t.Fatalf("Run with a cancelled context: err %v, config loaded %v; want context.Canceled before loading", err, loaded)
	}
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitInterrupted {
		t.Errorf("exit code %d, want %d", code, cmdutil.ExitInterrupted)
	}
}

func TestFailpointsFromEnv(t *testing.T) {
	t.Parallel()
	fp, err := failpointsFromEnv(func() []string { return []string{"HOME=/x", FailpointsEnv + "=after-precommit=crash"} })
	if err != nil || fp == nil || strings.Join(fp.Armed(), ";") != "after-precommit=crash" {
		t.Fatalf("armed %v, err %v; want after-precommit=crash", fp.Armed(), err)
	}
	if _, err := failpointsFromEnv(func() []string { return []string{FailpointsEnv + "=no-such-point=crash"} }); err == nil ||
		!strings.Contains(err.Error(), FailpointsEnv) {
		t.Errorf("unknown failpoint: err %v, want an error naming %s", err, FailpointsEnv)
	}
	if fp, err := failpointsFromEnv(func() []string { return nil }); fp != nil || err != nil {
		t.Errorf("no variable: %v, %v; want nothing armed", fp, err)
	}
}

func TestNewLoggerRejectsBadKeys(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if _, err := NewLogger(config.Log{Level: "loud"}, &buf); !config.IsConfigError(err) || !strings.Contains(err.Error(), "log.level") {
		t.Errorf("bad level: %v", err)
	}
	if _, err := NewLogger(config.Log{Format: "xml"}, &buf); !config.IsConfigError(err) || !strings.Contains(err.Error(), "log.format") {
		t.Errorf("bad format: %v", err)
	}
	l, err := NewLogger(config.Log{Level: "info", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hello")
	if !strings.HasPrefix(buf.String(), "{") {
		t.Errorf("json logger wrote %q", buf.String())
	}
}

type fakeFE map[string]string

func (f fakeFE) FrontendConfig(_ context.Context, pattern string) (map[string]string, error) {
	if f == nil {
		return nil, errors.New("Access denied; you need (at least one of) the ADMIN privilege(s)")
	}
	return map[string]string{pattern: f[pattern]}, nil
}

func TestWarnClocks(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Delivery: config.Delivery{CheckpointInterval: 40 * time.Minute}}
	var buf bytes.Buffer
	WarnClocks(t.Context(), fakeFE{precommitTimeoutKey: "3600", labelKeepKey: "43200", labelNumKey: "2000", runningTxnKey: "1000"},
		cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	out := buf.String()
	for _, want := range []string{"level=WARN msg=\"Doris clock: a PRECOMMITTED", "value=1h0m0s", "Doris clocks checked (see the warnings"} {
		if !strings.Contains(out, want) {
			t.Errorf("clock warnings lack %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want the precommit timeout's only (the others are Doris's defaults):\n%s", n, out)
	}
	// Issue 30: a healthy start logs one line, no warning.
	buf.Reset()
	healthy := &config.Config{Delivery: config.Delivery{CheckpointInterval: 10 * time.Second}}
	WarnClocks(t.Context(), fakeFE{precommitTimeoutKey: "3600", labelKeepKey: "43200", labelNumKey: "2000", runningTxnKey: "1000"},
		healthy, slog.New(slog.NewTextHandler(&buf, nil)))
	if out := buf.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=INFO msg=\"Doris clocks checked: the job is within them") ||
		!strings.Contains(out, "label_num_threshold=2000") {
		t.Errorf("healthy clocks: want one INFO line with the values:\n%s", out)
	}
	// A lowered label retention and count warn.
	buf.Reset()
	WarnClocks(t.Context(), fakeFE{precommitTimeoutKey: "3600", labelKeepKey: "600", labelNumKey: "100", runningTxnKey: "1000"},
		healthy, slog.New(slog.NewTextHandler(&buf, nil)))
	if out := buf.String(); strings.Count(out, "level=WARN") != 2 || !strings.Contains(out, "value=10m0s") {
		t.Errorf("lowered label clocks: want two warnings:\n%s", out)
	}
	buf.Reset()
	WarnClocks(t.Context(), fakeFE(nil), cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	if !strings.Contains(buf.String(), "Doris clocks not checked") {
		t.Errorf("no warning when the FE refuses: %s", buf.String())
	}
}
