package label

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"orders-eos:demo-orders:0:42", "j:h0123456789abcdef:w1:0", "a:b:c:d", "", "orders-eos:demo-orders:0:42:3", "j:h0123456789abcdef:w1:0:255", "j:d-t:0:1:0", "j:d-t:0:1:256", "j:d-t:0:1:01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			var le *Error
			if !errors.As(err, &le) || le.Input != s {
				t.Fatalf("Parse(%q) error %v is not an *Error naming the label", s, err)
			}
			return
		}
		if got := l.String(); got != s {
			t.Fatalf("Parse(%q).String() = %q", s, got)
		}
		if err := Validate(s); err != nil || !dorisRE.MatchString(s) {
			t.Fatalf("Parse accepted %q which Doris rejects: %v", s, err)
		}
	})
}

func FuzzBuild(f *testing.F) {
	f.Add("orders-eos", "demo", "orders", "0", uint64(42))
	f.Add("j", "d-b", "数据", "w-1", ^uint64(0))
	f.Fuzz(func(t *testing.T, prefix, db, table, scope string, cp uint64) {
		s, err := Build(prefix, db, table, scope, cp)
		if err != nil {
			if ValidatePrefix(prefix) == nil && ValidateScope(scope) == nil {
				t.Fatalf("Build(%q, %q, %q, %q, %d) failed with valid prefix and scope: %v", prefix, db, table, scope, cp, err)
			}
			return
		}
		if err := Validate(s); err != nil || !dorisRE.MatchString(s) || len(s) > MaxLen {
			t.Fatalf("Build gave %q that Doris rejects: %v", s, err)
		}
		l, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(Build()) = %v for %q", err, s)
		}
		want := Label{Prefix: prefix, TableTag: TableTag(db, table), Scope: scope, Checkpoint: cp}
		if l != want {
			t.Fatalf("Parse(%q) = %+v, want %+v", s, l, want)
		}
	})
}

func FuzzBuildSub(f *testing.F) {
	f.Add("orders-eos", "demo", "orders", "0", uint64(42), 0)
	f.Add("orders-eos", "demo", "orders", "0", uint64(42), 3)
	f.Add(strings.Repeat("p", MaxPrefixLen), strings.Repeat("d", 20), strings.Repeat("t", 19), strings.Repeat("s", MaxScopeLen), ^uint64(0), MaxSubLoads-1)
	f.Add("j", "d", "t", "0", uint64(1), MaxSubLoads)
	f.Fuzz(func(t *testing.T, prefix, db, table, scope string, cp uint64, sub int) {
		s, err := BuildSub(prefix, db, table, scope, cp, sub)
		if err != nil {
			if ValidatePrefix(prefix) == nil && ValidateScope(scope) == nil && sub >= 0 && sub < MaxSubLoads {
				t.Fatalf("BuildSub(%q, %q, %q, %q, %d, %d) failed with valid inputs: %v", prefix, db, table, scope, cp, sub, err)
			}
			return
		}
		if err := Validate(s); err != nil || !dorisRE.MatchString(s) || len(s) > MaxLen {
			t.Fatalf("BuildSub gave %q that Doris rejects: %v", s, err)
		}
		if sub == 0 {
			old, err := Build(prefix, db, table, scope, cp)
			if err != nil || old != s {
				t.Fatalf("BuildSub sub 0 = %q, Build = %q (%v): sub-load 0 must keep the old label", s, old, err)
			}
		}
		l, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(BuildSub()) = %v for %q", err, s)
		}
		if l.Prefix != prefix || l.Scope != scope || l.Checkpoint != cp || l.Sub != sub ||
			(l.TableTag != TableTag(db, table) && l.TableTag != HashTableTag(db, table)) {
			t.Fatalf("Parse(%q) = %+v, want prefix %q scope %q checkpoint %d sub %d", s, l, prefix, scope, cp, sub)
		}
		if l.TableTag != TableTag(db, table) && len(Label{Prefix: prefix, TableTag: TableTag(db, table), Scope: scope, Checkpoint: cp, Sub: sub}.String()) <= MaxLen {
			t.Fatalf("BuildSub hashed the table tag of %q though the verbatim one fits", s)
		}
	})
}
