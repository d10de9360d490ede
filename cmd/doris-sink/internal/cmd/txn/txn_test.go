package txn

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestDecideParsing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args    []string
		want    Target
		dry     bool
		yes     bool
		wantErr bool
	}{
		{args: []string{"1001", "--db", "demo"}, want: Target{ID: 1001}},
		{args: []string{"--label", "j:demo-t:0:1", "--dry-run"}, want: Target{Label: "j:demo-t:0:1"}, dry: true},
		{args: []string{"7", "-y"}, want: Target{ID: 7}, yes: true},
		{args: []string{}, wantErr: true},
		{args: []string{"x"}, wantErr: true},
		{args: []string{"-3"}, wantErr: true},
		{args: []string{"1", "--label", "l"}, wantErr: true},
		{args: []string{"1", "2"}, wantErr: true},
		{args: []string{"1", "-o", "yaml"}, wantErr: true},
	}
	for _, op := range []Operation{Commit, Abort} {
		for _, c := range cases {
			f, _, _ := cmdutil.NewTestFactory(false)
			var got *DecideOptions
			cmd := NewCmdDecide(f, op, func(_ context.Context, o *DecideOptions) error { got = o; return nil })
			cmd.SetArgs(c.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
			err := cmd.Execute()
			if c.wantErr {
				if err == nil {
					t.Errorf("%s %v: no error", op, c.args)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %v: %v", op, c.args, err)
				continue
			}
			if got.Target != c.want || got.DryRun != c.dry || got.Yes != c.yes || got.Op != op {
				t.Errorf("%s %v: got %+v", op, c.args, got)
			}
		}
	}
}

func TestStatusParsing(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	var got *StatusOptions
	cmd := NewCmdStatus(f, func(_ context.Context, o *StatusOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--label", "abc", "-o", "json", "--db", "demo"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Target.Label != "abc" || got.Output != cmdutil.OutputJSON {
		t.Errorf("got %+v", got)
	}
	cmd = NewCmdStatus(f, func(context.Context, *StatusOptions) error { return nil })
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) {
		t.Errorf("no target: %v", err)
	}
}
