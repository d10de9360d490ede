package checkpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader"
)

// The refusal of a decision of several txns names the table whose label
// expired, and both suggested commands carry --table: resolve refuses
// them without it when several txns are open.
func TestUnresolvedErrorHintNamesTable(t *testing.T) {
	t.Parallel()
	msg := (&loader.UnresolvedError{CheckpointID: 42, Table: "db.t2", Label: "j:db-t2:0:42", TxnID: 1001, Txns: 3}).Error()
	parts := strings.Split(msg, "`")
	if len(parts) < 4 || !strings.Contains(parts[0], "table db.t2") {
		t.Fatalf("hint %q does not name table db.t2 and two backticked commands", msg)
	}
	visible := strings.Fields(strings.ReplaceAll(parts[1], "<config>", "job.yaml"))
	f, _, _ := cmdutil.NewTestFactory(false)
	var got *ResolveOptions
	cmd := NewCmdResolve(f, func(_ context.Context, o *ResolveOptions) error { got = o; return nil })
	cmd.SetArgs(visible[3:])
	if err := cmd.Execute(); err != nil {
		t.Fatalf("hint %q does not parse: %v", parts[1], err)
	}
	if got.Checkpoint != 42 || got.Assume != "visible" || got.Table != "db.t2" {
		t.Errorf("hint %q parsed as %+v", parts[1], got)
	}
	if !strings.Contains(parts[3], "--table db.t2") || !strings.Contains(parts[3], "--assume aborted") {
		t.Errorf("second hint %q does not name --table db.t2 and --assume aborted", parts[3])
	}
	// One txn: no --table (the form older stores and single-table jobs use).
	if one := (&loader.UnresolvedError{CheckpointID: 42, Table: "db.t", Label: "j:db-t:0:42", Txns: 1}).Error(); strings.Contains(one, "--table") {
		t.Errorf("single-txn hint names --table: %q", one)
	}
}
