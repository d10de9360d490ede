package label

import (
	"context"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestParsing(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	var st *StatusOptions
	cmd := NewCmdStatus(f, func(_ context.Context, o *StatusOptions) error { st = o; return nil })
	cmd.SetArgs([]string{"j:demo-t:0:4", "--db", "demo", "-c", "x.yaml", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if st.Label != "j:demo-t:0:4" || st.ConfigFile != "x.yaml" || st.Output != "json" {
		t.Errorf("status opts %+v", st)
	}
	if v, _ := st.Cmd.Flags().GetString("db"); v != "demo" {
		t.Errorf("--db = %q", v)
	}
	cmd = NewCmdStatus(f, func(context.Context, *StatusOptions) error { return nil })
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("status without a label accepted")
	}

	var ls *ListOptions
	cmd = NewCmdList(f, func(_ context.Context, o *ListOptions) error { ls = o; return nil })
	cmd.SetArgs([]string{"-c", "x.yaml", "--prefix", "j:", "--no-doris"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if ls.Prefix != "j:" || !ls.NoDoris || ls.Output != "table" {
		t.Errorf("list opts %+v", ls)
	}
	cmd = NewCmdList(f, func(context.Context, *ListOptions) error { return nil })
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("list without -c accepted")
	}
}
