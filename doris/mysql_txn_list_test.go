package doris_test

import (
	"context"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

// §6.2: SHOW TRANSACTION WHERE label LIKE lists every matching txn, newest
// first; no match is an empty list (Doris answers an empty result set, not
// "does not exist"); WHERE status = lists one state; the pattern is quoted.
func TestTransactionsByLabelLikeAndStatus(t *testing.T) {
	t.Parallel()
	_, c := newEmulated(t)
	ctx := context.Background()
	load := func(label string) int64 {
		t.Helper()
		res, err := c.StreamLoad(ctx, jsonLoad(label), strings.NewReader(twoRows))
		if err != nil {
			t.Fatalf("StreamLoad %s: %v", label, err)
		}
		return res.TxnID
	}
	first := load("job:demo-orders:0:1")
	if err := c.CommitTxn(ctx, emuDB, first); err != nil {
		t.Fatalf("CommitTxn: %v", err)
	}
	second := load("job:demo-orders:0:2")
	other := load("other:demo-orders:0:1")

	got, err := c.TransactionsByLabelLike(ctx, emuDB, "job:%")
	if err != nil {
		t.Fatalf("TransactionsByLabelLike: %v", err)
	}
	if len(got) != 2 || got[0].ID != second || got[1].ID != first {
		t.Fatalf("job:%% = %+v, want txns %d then %d", got, second, first)
	}
	if got[0].Label != "job:demo-orders:0:2" || got[0].Status != doris.TxnPrecommitted || got[0].PrepareTime.IsZero() {
		t.Errorf("newest = %+v, want job:demo-orders:0:2 PRECOMMITTED with a prepare time", got[0])
	}
	if st := got[1].Status; st != doris.TxnVisible && st != doris.TxnCommitted {
		t.Errorf("committed txn status %s", st)
	}

	for _, p := range []string{"nobody:%", "x' OR '1'='1", `x\'%`} {
		none, err := c.TransactionsByLabelLike(ctx, emuDB, p)
		if err != nil || none == nil || len(none) != 0 {
			t.Errorf("LIKE %q = %+v, %v; want an empty, non-nil list and no error", p, none, err)
		}
	}

	pre, err := c.TransactionsByStatus(ctx, emuDB, doris.TxnPrecommitted)
	if err != nil {
		t.Fatalf("TransactionsByStatus: %v", err)
	}
	if len(pre) != 2 || pre[0].ID != other || pre[1].ID != second {
		t.Errorf("precommitted = %+v, want txns %d then %d", pre, other, second)
	}
	prep, err := c.TransactionsByStatus(ctx, emuDB, doris.TxnPrepare)
	if err != nil || len(prep) != 0 {
		t.Errorf("prepare = %+v, %v; want none", prep, err)
	}
}

// SELECT COUNT(*) counts the visible rows: the committed load only.
func TestTableRowCount(t *testing.T) {
	t.Parallel()
	_, c := newEmulated(t)
	ctx := context.Background()
	res, err := c.StreamLoad(ctx, jsonLoad("count:1"), strings.NewReader(twoRows))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.TableRowCount(ctx, emuDB, "orders"); err != nil || n != 0 {
		t.Fatalf("count before commit = %d, %v; want 0", n, err)
	}
	if err := c.CommitTxn(ctx, emuDB, res.TxnID); err != nil {
		t.Fatal(err)
	}
	if n, err := c.TableRowCount(ctx, emuDB, "orders"); err != nil || n != 2 {
		t.Fatalf("count after commit = %d, %v; want 2", n, err)
	}
	if _, err := c.TableRowCount(ctx, emuDB, "missing"); err == nil {
		t.Error("count of a missing table: no error")
	}
}
