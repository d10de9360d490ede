package checkpoint

import (
	"context"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestParsing(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	var sh *ShowOptions
	cmd := NewCmdShow(f, func(_ context.Context, o *ShowOptions) error { sh = o; return nil })
	cmd.SetArgs([]string{"-c", "x.yaml", "--history", "3"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if sh.ConfigFile != "x.yaml" || sh.History != 3 {
		t.Errorf("show opts %+v", sh)
	}
	var rs *ResolveOptions
	cmd = NewCmdResolve(f, func(_ context.Context, o *ResolveOptions) error { rs = o; return nil })
	cmd.SetArgs([]string{"-c", "x.yaml", "--checkpoint", "42", "--assume", "aborted", "--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if rs.Checkpoint != 42 || rs.Assume != "aborted" || !rs.DryRun {
		t.Errorf("resolve opts %+v", rs)
	}
	for _, args := range [][]string{
		{"--checkpoint", "1", "--assume", "visible"},
		{"-c", "x", "--assume", "visible"},
		{"-c", "x", "--checkpoint", "1", "--assume", "maybe"},
	} {
		cmd = NewCmdResolve(f, func(context.Context, *ResolveOptions) error { return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		if err := cmd.Execute(); err == nil {
			t.Errorf("resolve %v accepted", args)
		}
	}
}
