package check

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

func TestParsing(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	var got *Options
	cmd := NewCmdCheck(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-c", "x.yaml", "--timeout", "3s", "--skip-kafka", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.ConfigFile != "x.yaml" || got.Timeout != 3*time.Second || !got.SkipKafka || got.Output != "json" {
		t.Errorf("opts %+v", got)
	}
	cmd = NewCmdCheck(f, func(context.Context, *Options) error { return nil })
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("check without -c accepted")
	}
}
