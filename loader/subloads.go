package loader

import (
	"context"
	"fmt"

	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// txnKey names one txn of a checkpoint: sub-load sub of table ("db.table").
// A table without sub-loads has the one key {table, 0}.
type txnKey struct {
	table string
	sub   int
}

func keyOf(t checkpoint.Txn) txnKey { return txnKey{t.Table, t.Sub} }

// subTarget is one sub-load of a table target in an attempt.
type subTarget struct {
	tt  *tableTarget
	sub int
}

// validSubLoads checks a sub-load count K: 1 to label.MaxSubLoads.
func validSubLoads(k int) error {
	if k < 1 || k > label.MaxSubLoads {
		return fmt.Errorf("sub-loads %d: want 1 to %d", k, label.MaxSubLoads)
	}
	return nil
}

// subsOf records K in a txn: 0 (omitted in the store) when the table has no
// sub-loads, so a K = 1 store is byte for byte what it was before
// sub-loads.
func subsOf(k int) int {
	if k <= 1 {
		return 0
	}
	return k
}

// WriteToKey is WriteTo routing row to one of the table's sub-loads by
// key: sub-load key mod K, K being the table's sub-load count (Target.SubLoads,
// Config.SubLoads; while healing, the K the healed decision recorded for
// the table, whatever is configured now). Rows of one key go to one
// Stream Load, in the order written: the Kafka connector passes the source
// partition, so a key's versions stay in one load in order (never
// round-robin: Unique Key tables without a sequence column keep the
// last row a load holds). Each sub-load is its own 2PC txn with its own
// label (docs/design.md §3), announced before it begins; all are decided by
// the checkpoint's one decision. With K = 1 it is WriteTo.
func (l *Loader) WriteToKey(ctx context.Context, table string, key uint64, row []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	tt, err := l.target(table)
	if err != nil {
		return err
	}
	return l.writeTo(ctx, tt, l.subOf(tt, key), row)
}

// WriteKey is WriteToKey of Config.Table.
func (l *Loader) WriteKey(ctx context.Context, key uint64, row []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	return l.writeTo(ctx, l.owner, l.subOf(l.owner, key), row)
}

// subOf returns the sub-load of key for tt in the current attempt.
func (l *Loader) subOf(tt *tableTarget, key uint64) int {
	k := tt.k()
	if h := l.cur.heal; h != nil && h.d.HasTable(tt.name) {
		k = h.d.SubLoads(tt.name)
	}
	if k <= 1 {
		return 0
	}
	return int(key % uint64(k))
}

// SubLoads returns the sub-load count K of table ("db.table" or a table of
// Config.DB) as configured: Target.SubLoads, else Config.SubLoads (1 by
// default). Safe for concurrent use.
func (l *Loader) SubLoads(table string) int {
	if tt := l.tables.get(l.qualify(table)); tt != nil {
		return tt.k()
	}
	return l.cfg.SubLoads
}

// beSlot is the doris.LoadRequest.BESlot of sub-load sub in checkpoint id:
// 1 + (sub + id) mod 2^30, so with doris.be_spread backends (or doris.be)
// the K sub-loads of a table go to BEs (sub + id) mod n, K distinct BEs
// when n ≥ K, and each checkpoint moves them on by one (the tables of a
// checkpoint do not all start on the same BE across checkpoints). The
// choice of BE is not recorded anywhere: recovery needs only the label.
func beSlot(sub int, id uint64) int {
	return 1 + int((uint64(sub)+id)%(1<<30))
}
