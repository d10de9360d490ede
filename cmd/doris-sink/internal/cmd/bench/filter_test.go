package bench

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// TestCaseFlag: --case keeps only the named combos of the full matrix
// (no latency, no recovery) and refuses an unknown name as a usage error.
func TestCaseFlag(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (*Options, error) {
		f, _, _ := cmdutil.NewTestFactory(false)
		var got *Options
		cmd := NewCmdBench(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		return got, cmd.ExecuteContext(context.Background())
	}
	o, err := run("--case", "json-100B-p8,csv-1KiB-p1", "--repeat", "3")
	if err != nil {
		t.Fatalf("bench --case: %v", err)
	}
	p := o.plan()
	if len(p.Combos) != 2 || p.Combos[0].Name() != "json-100B-p8" || p.Combos[1].Name() != "csv-1KiB-p1" {
		t.Fatalf("combos = %+v, want json-100B-p8 and csv-1KiB-p1", p.Combos)
	}
	if len(p.Latency) != 0 || p.Recovery || p.Repeat != 3 {
		t.Fatalf("plan = %+v, want no latency, no recovery, repeat 3", p)
	}
	_, err = run("--case", "json-7B-p1")
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) {
		t.Fatalf("unknown case: err = %v, want a *cmdutil.FlagError", err)
	}
}
