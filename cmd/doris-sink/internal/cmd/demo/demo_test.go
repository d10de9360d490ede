package demo

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestDemoRunsAndPasses(t *testing.T) {
	t.Parallel()
	io, out, errOut := cmdutil.TestStreams("", false)
	err := Run(t.Context(), &Options{IO: io, Factory: &cmdutil.Factory{IO: io}, DataDir: t.TempDir(), Orders: 30, Timeout: 2 * time.Minute})
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	got := out.String()
	for _, want := range []string{"crashed at mid-stream", "crashed at after-precommit", "crashed at before-decide", "crashed at after-decide",
		"CDC evidence:", "shop_customers (created from the schema, columns id, name, email)", "1 schema_changed",
		"Avro CDC evidence:", "shop_avro_customers has", "the added email column holds", "RESULT: OK"} {
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
	if n, want := strings.Count(logs, "level=INFO msg=\"planned crash at "), 4*len(crashPoints); n != want {
		t.Errorf("%d planned-crash lines, want %d (two tables and the two CDC jobs × %d failpoints)", n, want, len(crashPoints))
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
		Timeout: 2 * time.Minute, Format: formatProtobuf})
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
		Timeout: 2 * time.Minute, Format: formatAvro})
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

// The CDC round passes, and its check fails when a table misses a row of
// the source or when an event was loaded twice (the committed txns loaded
// more rows than the table's events).
func TestCDCRoundChecksFailOnMissingOrDoubled(t *testing.T) {
	t.Parallel()
	io, out, _ := cmdutil.TestStreams("", false)
	n := narrator{mu: &sync.Mutex{}, w: io.Out}
	dir := t.TempDir()
	env, err := startEnv(t.Context(), dir, io.ErrOut, "")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	if _, err := env.db.ExecContext(t.Context(), "CREATE DATABASE "+demoDB); err != nil {
		t.Fatal(err)
	}
	ok, err := env.runCDC(t.Context(), dir, n, 14)
	if err != nil || !ok {
		t.Fatalf("CDC round: ok %v, err %v\n%s", ok, err, out)
	}
	evs := cdcEvents(14)
	cfg := env.cdcConfig(dir)
	// A row the source has and the table lacks: the source gains an item.
	extra := append(slices.Clone(evs), cdcEvent{table: &cdcTables[2], op: "c", id: 999, row: []string{"999", "1", `"sku-999"`, "1"}})
	out.Reset()
	if env.checkCDC(t.Context(), cfg, extra, n) || !strings.Contains(out.String(), "[FAIL] shop_items") {
		t.Errorf("a missing row passed the check:\n%s", out)
	}
	// An event loaded twice: the source had one event fewer than was loaded
	// (drop an order update: the loaded rows exceed the events).
	upd := slices.IndexFunc(evs, func(e cdcEvent) bool { return e.table == &cdcTables[1] && e.op == "u" })
	fewer := slices.Delete(slices.Clone(evs), upd, upd+1)
	out.Reset()
	if env.checkCDC(t.Context(), cfg, fewer, n) || !strings.Contains(out.String(), "[FAIL] exactly once: the committed txns of shop_orders") {
		t.Errorf("a doubled event passed the check:\n%s", out)
	}
}

func TestCDCEventsExpectedState(t *testing.T) {
	t.Parallel()
	rows, events := cdcExpected(cdcEvents(14))
	if got := len(rows["shop_customers"]); got != 12 { // 7 and 14 deleted
		t.Errorf("%d customers, want 12", got)
	}
	if r := rows["shop_customers"][1]; strings.Join(r, ",") != "1,customer-1,c1@shop.example" {
		t.Errorf("customer 1 %v: want the email its update after the schema change set", r)
	}
	if r := rows["shop_customers"][2]; strings.Join(r, ",") != "2,customer-2," {
		t.Errorf("customer 2 %v: want no email (NULL)", r)
	}
	if got := len(rows["shop_items"]); got != 28-2 { // items 10 and 20 deleted
		t.Errorf("%d items, want 26", got)
	}
	if events["shop_orders"] != 14+4 {
		t.Errorf("%d orders events, want 18 (14 creates, 4 updates)", events["shop_orders"])
	}
}
