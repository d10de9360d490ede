package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestDemoRunsAndPasses(t *testing.T) {
	t.Parallel()
	io, out, errOut := cmdutil.TestStreams("", false)
	err := Run(t.Context(), &Options{IO: io, Factory: &cmdutil.Factory{IO: io}, DataDir: t.TempDir(), Orders: 30, Timeout: 50 * time.Second})
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	got := out.String()
	for _, want := range []string{"crashed at mid-stream", "crashed at after-precommit", "crashed at before-decide", "crashed at after-decide", "RESULT: OK"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, "[FAIL]") {
		t.Error("a check failed")
	}
	// The crashes are the demo's own: reported as planned, never as errors.
	logs := errOut.String()
	if strings.Contains(logs, "level=ERROR") {
		t.Errorf("planned crashes logged as errors:\n%s", logs)
	}
	if n, want := strings.Count(logs, "level=INFO msg=\"planned crash at "), 2*len(crashPoints); n != want {
		t.Errorf("%d planned-crash lines, want %d (two tables × %d failpoints)", n, want, len(crashPoints))
	}
}

func TestExpectedStateKeepsNewestAndDropsDeletes(t *testing.T) {
	t.Parallel()
	st := expectedState(orderEvents(10))
	if len(st) != 8 { // orders 5 and 10 are deleted
		t.Fatalf("expected state has %d orders, want 8", len(st))
	}
	for id, ev := range st {
		if ev.Status != statusPaid || ev.OpVersion != 3 {
			t.Errorf("order %d: %s v%d, want PAID v3 (the late CANCELLED v2 must lose)", id, ev.Status, ev.OpVersion)
		}
	}
}

func TestCmdDemoRejectsNoOrders(t *testing.T) {
	t.Parallel()
	io, _, _ := cmdutil.TestStreams("", false)
	called := false
	cmd := NewCmdDemo(&cmdutil.Factory{IO: io}, func(*Options) error { called = true; return nil })
	cmd.SetArgs([]string{"--orders", "0"})
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	err := cmd.Execute()
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || called {
		t.Errorf("err %v (exit %d), called %v; want a usage error and no run", err, cmdutil.ExitCode(err), called)
	}
}

// --format protobuf: the same story and evidence with the events in
// Protobuf (the amount a confluent.type.Decimal) through the in-process
// Schema Registry.
func TestDemoProtobufRunsAndPasses(t *testing.T) {
	t.Parallel()
	io, out, errOut := cmdutil.TestStreams("", false)
	err := Run(t.Context(), &Options{IO: io, Factory: &cmdutil.Factory{IO: io}, DataDir: t.TempDir(), Orders: 20,
		Timeout: 50 * time.Second, Format: formatProtobuf})
	if err != nil {
		t.Fatalf("demo --format protobuf: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	got := out.String()
	for _, want := range []string{"events are Protobuf", "records.format protobuf", "RESULT: OK"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[FAIL]") {
		t.Errorf("a check failed:\n%s", got)
	}
}

// --format avro: the same story and evidence with the events in Avro
// through the in-process Schema Registry.
func TestDemoAvroRunsAndPasses(t *testing.T) {
	t.Parallel()
	io, out, errOut := cmdutil.TestStreams("", false)
	err := Run(t.Context(), &Options{IO: io, Factory: &cmdutil.Factory{IO: io}, DataDir: t.TempDir(), Orders: 20,
		Timeout: 50 * time.Second, Format: formatAvro})
	if err != nil {
		t.Fatalf("demo --format avro: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	got := out.String()
	for _, want := range []string{"events are Avro", "RESULT: OK"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[FAIL]") {
		t.Errorf("a check failed:\n%s", got)
	}
}
