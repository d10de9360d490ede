package loader_test

import (
	"context"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// A heal keeps the txns Recover committed just before as committed: the
// heal's decision does not write them back uncommitted, its background
// commit does not commit them again, and the ledger has one "committed"
// entry per txn of the healed checkpoint (review of branch multi,
// finding 3). Every table ends exactly right.
func TestMultiTableHealKeepsTxnsRecoverCommitted(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every) // decision 2 made, not committed
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	victim := d.Txns[1]
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	var decidedHeal *checkpoint.Decision
	l := e.open(func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{AfterDecide: func(id uint64) {
			s, err := checkpoint.ReadFile(e.dir)
			if err == nil && id == 2 {
				c := s.Decided.Clone()
				decidedHeal = &c
			}
		}}
	})
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := driveMulti(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	if decidedHeal == nil {
		t.Fatal("the heal of checkpoint 2 was never decided")
	}
	for _, tx := range decidedHeal.Txns {
		if tx.Table != victim.Table && !tx.Committed {
			t.Errorf("heal decision wrote txn %s (committed by Recover) back as uncommitted: %+v", tx.Table, tx)
		}
	}
	per := map[string]int{}
	for _, en := range entriesOf(t, e.dir, 2, ledger.EventCommitted) {
		per[en.DB+"."+en.Table]++
	}
	for _, tx := range d.Txns {
		if per[tx.Table] != 1 {
			t.Errorf("checkpoint 2 table %s has %d committed ledger entries, want 1", tx.Table, per[tx.Table])
		}
	}
}
