package kafka

import (
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// A heal refused because its replay does not match the decision (the
// routing or the source changed since) cannot be fixed by retrying: it is
// a fail-fast cause, so Run ends with a *FatalError naming the checkpoint
// and the table after the grace instead of healing again for ever.
func TestHealMismatchIsUnfixable(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("checkpoint 2 failed at heal: %w", &loader.HealMismatchError{CheckpointID: 2, Table: "db.m3",
		Label: "j:db-m3:0:2", TxnID: 7, Decided: 2})
	u, ok := unfixableOf(err, "orders")
	if !ok || u.kind != "heal-mismatch" || u.what == "" || u.fix == "" {
		t.Fatalf("unfixableOf(heal mismatch) = %+v, %t; want the heal-mismatch cause", u, ok)
	}
}
