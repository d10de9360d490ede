package kafka

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// With doris.sub_loads K = 4 the Connector routes each record to sub-load
// partition mod 4: every decision's txns are exactly the sub-loads of the
// partitions its range advanced, and every id lands once.
func TestSubLoadsRouteByPartition(t *testing.T) {
	t.Parallel()
	const n, parts, k = 60, 6, 4
	ctx := ctxFor(t)
	e := newEnv(t, parts)
	e.subLoads = k
	e.produceIDs(0, n, parts)
	cfg := e.config()
	cfg.CheckpointMaxRows = 9
	if err := e.runToEnd(ctx, e.connector(cfg, nil)); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(n)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	decisions := append(slices.Clone(st.History), *st.Decided)
	multi := 0
	for _, d := range decisions {
		var start, end Position
		if len(d.Start) > 0 {
			if err := json.Unmarshal(d.Start, &start); err != nil {
				t.Fatal(err)
			}
		}
		if err := json.Unmarshal(d.End, &end); err != nil {
			t.Fatal(err)
		}
		var want, got []int
		for p, off := range end.Offsets {
			if off > start.Offsets[p] && !slices.Contains(want, int(p)%k) {
				want = append(want, int(p)%k)
			}
		}
		for _, tx := range d.Txns {
			got = append(got, tx.Sub)
			if tx.Subs != k {
				t.Errorf("checkpoint %d txn %+v: want subs %d", d.ID, tx, k)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("checkpoint %d [%s, %s): txns of sub-loads %v, want %v (partition mod %d)", d.ID, d.Start, d.End, got, want, k)
		}
		if len(got) > 1 {
			multi++
		}
	}
	if multi == 0 {
		t.Fatalf("no checkpoint had more than one sub-load: %+v", decisions)
	}
}
