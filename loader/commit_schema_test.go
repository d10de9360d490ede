package loader_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/doris-sink/doris-sink/loader"
)

// A decided partial-update checkpoint whose table's VARCHAR is lengthened
// between its precommit and its commit is refused by Doris at commit for
// good (docs/doris-facts.md §13, fe TransactionState.checkSchemaCompatibility):
// the background commit fails, Recover aborts the label and heals the
// checkpoint into the same label, and its rows land exactly once.
func TestCommitRefusedForSchemaChangeIsHealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.table = "events_u"
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	var acts recoverActions
	l := e.open(func(c *loader.Config) {
		c.Failpoints = fps
		c.Properties = map[string]string{"partial_columns": "true", "columns": "id,v"}
		acts.knobs(c)
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	failed := l.CommitFailed()
	if err := drive(ctx, l, 0, 5, 5); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", "root:@tcp("+e.srv.MySQLAddr()+")/"+testDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "ALTER TABLE events_u MODIFY COLUMN v VARCHAR(64)"); err != nil {
		t.Fatal(err)
	}
	h.Release()
	<-failed
	recoverTo(t, ctx, l, 0) // healed: replay from the checkpoint's start
	if !acts.has("PRECOMMITTED:heal") {
		t.Fatalf("recovery actions %v, want PRECOMMITTED:heal", acts.got)
	}
	e.finish(ctx, l, 0, 5, 5)
}
