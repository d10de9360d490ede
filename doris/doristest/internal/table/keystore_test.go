package table

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestKeyStoreAgainstMap drives a keyStore through inserts, replacements,
// deletes and tombstones (enough to grow the slot table and compact the
// arena several times) and checks it against a Go map after every step;
// a snapshot taken midway keeps its rows.
func TestKeyStoreAgainstMap(t *testing.T) {
	t.Parallel()
	// key columns 2 and 0 (key order differs from schema order), 4 columns.
	ks := newKeyStore([]int{2, 0}, 4)
	want := map[string]entry{}
	rnd := rand.New(rand.NewPCG(1, 2))
	row := func(k int64, v int) []any {
		return []any{k % 7, fmt.Sprintf("v%d", v), fmt.Sprintf("k%d", k), float64(v) / 2}
	}
	key := func(r []any) []byte { return encodeKey(nil, []int{2, 0}, r) }
	var snap []uint64
	var snapArena rowStore
	var snapRows [][]any
	for step := range 20000 {
		k := int64(rnd.IntN(3000))
		r := row(k, step)
		kb := key(r)
		switch op := rnd.IntN(10); {
		case op < 6:
			ks.put(kb, entry{row: r, seq: int64(step)})
			want[string(kb)] = entry{row: r, seq: int64(step)}
		case op < 8:
			ks.put(kb, entry{seq: int64(step), deleted: true})
			want[string(kb)] = entry{seq: int64(step), deleted: true}
		default:
			ks.del(kb)
			delete(want, string(kb))
		}
		if step == 10000 {
			snap, snapArena = ks.liveRefs(), ks.arena.view()
			for _, ref := range snap {
				snapRows = append(snapRows, ks.lay.decodeRecord(snapArena.at(ref)).row)
			}
		}
		if step%997 == 0 || step == 19999 {
			got := map[string]entry{}
			ks.each(func(kb []byte, e entry) bool {
				got[string(kb)] = e
				return true
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: store has %d keys, want %d", step, len(got), len(want))
			}
			if ks.keys != len(want) {
				t.Fatalf("step %d: keys = %d, want %d", step, ks.keys, len(want))
			}
		}
	}
	for kb, w := range want {
		if got, ok := ks.get([]byte(kb)); !ok || !reflect.DeepEqual(got, w) {
			t.Fatalf("get(%q) = %v %v, want %v", kb, got, ok, w)
		}
	}
	// The midway snapshot still reads what it saw, column by column.
	for i, ref := range snap {
		for c := range 4 {
			if v := ks.lay.value(snapArena.at(ref), c); !reflect.DeepEqual(v, snapRows[i][c]) {
				t.Fatalf("snapshot row %d col %d = %v, want %v", i, c, v, snapRows[i][c])
			}
		}
	}
	if live := ks.liveRefs(); len(live) != countLive(want) {
		t.Fatalf("liveRefs = %d, want %d", len(live), countLive(want))
	}
}

func countLive(m map[string]entry) int {
	n := 0
	for _, e := range m {
		if !e.deleted {
			n++
		}
	}
	return n
}
