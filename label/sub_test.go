package label

import (
	"errors"
	"strings"
	"testing"
)

func TestBuildSub(t *testing.T) {
	old, err := Build("orders-eos", "demo", "orders", "0", 42)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sub  int
		want string
	}{
		{0, "orders-eos:demo-orders:0:42"}, // sub-load 0 is the old label, byte for byte
		{1, "orders-eos:demo-orders:0:42:1"},
		{255, "orders-eos:demo-orders:0:42:255"},
	} {
		got, err := BuildSub("orders-eos", "demo", "orders", "0", 42, c.sub)
		if err != nil || got != c.want {
			t.Errorf("BuildSub(sub %d) = %q, %v; want %q", c.sub, got, err, c.want)
		}
		l, err := Parse(got)
		if err != nil || l.Sub != c.sub || l.String() != got {
			t.Errorf("Parse(%q) = %+v, %v", got, l, err)
		}
	}
	if old != "orders-eos:demo-orders:0:42" {
		t.Fatalf("Build changed: %q", old)
	}
}

// The worst case of the old format uses all 128 characters: a sub-load
// label of it takes the hashed table tag and still fits.
func TestBuildSubWorstCaseHashesTag(t *testing.T) {
	p, s := strings.Repeat("p", MaxPrefixLen), strings.Repeat("s", MaxScopeLen)
	db, tbl := strings.Repeat("d", 20), strings.Repeat("t", MaxTableTagLen-21)
	base, err := Build(p, db, tbl, s, ^uint64(0))
	if err != nil || len(base) != MaxLen {
		t.Fatalf("worst case Build = %d characters, %v; want %d", len(base), err, MaxLen)
	}
	got, err := BuildSub(p, db, tbl, s, ^uint64(0), MaxSubLoads-1)
	if err != nil {
		t.Fatal(err)
	}
	want := p + ":" + HashTableTag(db, tbl) + ":" + s + ":18446744073709551615:255"
	if got != want || len(got) > MaxLen {
		t.Fatalf("BuildSub = %q (%d), want %q", got, len(got), want)
	}
	// A short checkpoint keeps the verbatim tag: hashing only when needed.
	got, err = BuildSub(p, db, tbl, s, 7, 3)
	if err != nil || !strings.Contains(got, ":"+TableTag(db, tbl)+":") {
		t.Fatalf("BuildSub(checkpoint 7) = %q, %v; want the verbatim tag", got, err)
	}
}

func TestBuildSubRejects(t *testing.T) {
	for _, sub := range []int{-1, MaxSubLoads} {
		_, err := BuildSub("j", "d", "t", "0", 1, sub)
		var le *Error
		if !errors.As(err, &le) || le.Field != "sub-load" {
			t.Errorf("BuildSub(sub %d) = %v, want a sub-load *Error", sub, err)
		}
	}
}

func TestParseSubRejects(t *testing.T) {
	long := strings.Repeat("p", MaxPrefixLen) + ":" + strings.Repeat("d", 20) + "-" + strings.Repeat("t", 19) + ":" +
		strings.Repeat("s", MaxScopeLen) + ":1844674407370955161:1"
	for _, s := range []string{
		"j:d-t:0:1:0",   // sub-load 0 has no field
		"j:d-t:0:1:01",  // not canonical
		"j:d-t:0:1:256", // out of range
		"j:d-t:0:1:",    // empty
		"j:d-t:0:1:2:3", // six fields
		"j:d-t:0:1:-1",
		long[:len(long)-2] + "9:1", // 129 characters
	} {
		if l, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", s, l)
		}
	}
}
