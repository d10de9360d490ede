package loader_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// With doris.be_spread backends the K sub-loads of a table land on K
// distinct BEs in every checkpoint: sub-load s of checkpoint N goes to BE
// (s + N) mod n of the FE's /api/backends (doris/be_spread.go, loader
// beSlot), whatever other loads of the cluster go through the FE's round
// robin meanwhile (here one before each sub-load's first row: with
// doris.be_spread fe, the sub-loads would share BEs). The emulator's per-BE
// LoadsServed shows which BE took each load.
func TestSubLoadsSpreadOverBackends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, doristest.WithBackends(4))
	c, err := doris.NewClient(doris.Config{FE: []string{e.srv.FEURL()}, User: "root", MaxRetries: -1,
		RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second, BESpread: doris.BESpreadBackends})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	other := e.client // FE redirects: another loader of the cluster
	e.client = c
	l := e.open(subsK(4))
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	served := func() []int64 {
		var out []int64
		for _, b := range e.srv.Backends() {
			out = append(out, b.LoadsServed)
		}
		return out
	}
	const perCheckpoint, checkpoints = 8, 3
	prev := served()
	for n := range checkpoints {
		for i := n * perCheckpoint; i < (n+1)*perCheckpoint; i++ {
			if i%perCheckpoint < 4 {
				lbl := fmt.Sprintf("other-%d", i)
				before := served()
				if _, err := other.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: "events_u", Label: lbl, Format: "json",
					ReadJSONByLine: true}, strings.NewReader(string(row(i)))); err != nil {
					t.Fatal(err)
				}
				for b, v := range served() {
					prev[b] += v - before[b] // not the loader's
				}
			}
			if err := l.WriteKey(ctx, uint64(i%4), row(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Checkpoint(ctx, pos((n+1)*perCheckpoint)); err != nil {
			t.Fatal(err)
		}
		now := served()
		delta := make([]int64, len(now))
		for i := range now {
			delta[i] = now[i] - prev[i]
		}
		if !slices.Equal(delta, []int64{1, 1, 1, 1}) {
			t.Fatalf("checkpoint %d: Stream Loads per BE %v, want one on each of the 4 BEs", n+1, delta)
		}
		prev = now
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(perCheckpoint * checkpoints)
}
