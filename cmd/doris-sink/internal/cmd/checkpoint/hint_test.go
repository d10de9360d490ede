package checkpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader"
)

// The loader's refusal tells the operator what to type; that command must
// parse (found by the chaos campaign: the hint once named a form that
// resolve rejects).
func TestUnresolvedErrorHintParses(t *testing.T) {
	t.Parallel()
	msg := (&loader.UnresolvedError{CheckpointID: 42, Label: "j:db-t:0:42", TxnID: 1001}).Error()
	parts := strings.Split(msg, "`")
	if len(parts) < 4 {
		t.Fatalf("no backticked commands in %q", msg)
	}
	visible := strings.Fields(strings.ReplaceAll(parts[1], "<config>", "job.yaml"))
	if len(visible) < 3 || visible[0] != "doris-sink" || visible[1] != "checkpoint" || visible[2] != "resolve" {
		t.Fatalf("first hint %q is not a checkpoint resolve command", parts[1])
	}
	f, _, _ := cmdutil.NewTestFactory(false)
	var got *ResolveOptions
	cmd := NewCmdResolve(f, func(_ context.Context, o *ResolveOptions) error { got = o; return nil })
	cmd.SetArgs(visible[3:])
	if err := cmd.Execute(); err != nil {
		t.Fatalf("hint %q does not parse: %v", parts[1], err)
	}
	if got.Checkpoint != 42 || got.Assume != "visible" || got.ConfigFile != "job.yaml" {
		t.Errorf("hint %q parsed as %+v", parts[1], got)
	}
	if !strings.Contains(parts[3], "--checkpoint 42") || !strings.Contains(parts[3], "--assume aborted") {
		t.Errorf("second hint %q does not name the checkpoint and --assume aborted", parts[3])
	}
}
