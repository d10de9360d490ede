package table

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestRowStoreRoundTripAndViews: rows come back as stored, one column can
// be read without the others, and a view is unchanged by later appends
// (also across a chunk boundary).
func TestRowStoreRoundTripAndViews(t *testing.T) {
	t.Parallel()
	rows := [][]any{
		{int64(1), "a", nil, 1.5},
		{int64(-1 << 62), "", math.Inf(1), "2024-05-01 10:00:00"},
		{nil, strings.Repeat("x", chunkSize+10), int64(0), -0.25},
	}
	var s rowStore
	var scratch []byte
	scratch = s.addRow(rows[0], scratch)
	view := s.view()
	for _, r := range rows[1:] {
		scratch = s.addRow(r, scratch)
	}
	if view.len() != 1 || s.len() != 3 {
		t.Fatalf("view has %d rows, store %d; want 1 and 3", view.len(), s.len())
	}
	if got := view.row(0, 4, nil); !reflect.DeepEqual(got, rows[0]) {
		t.Errorf("view row 0 = %v, want %v", got, rows[0])
	}
	for i, want := range rows {
		if got := s.row(i, 4, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("row %d = %v, want %v", i, got, want)
		}
		for c := range want {
			if got := s.value(i, c); !reflect.DeepEqual(got, want[c]) {
				t.Errorf("value(%d, %d) = %v, want %v", i, c, got, want[c])
			}
		}
	}
	var o rowStore
	o.addRow([]any{int64(7), "z", nil, 0.0}, nil)
	s.appendStore(&o)
	if got := s.row(3, 4, nil); !reflect.DeepEqual(got, []any{int64(7), "z", nil, 0.0}) {
		t.Errorf("adopted row = %v", got)
	}
}
