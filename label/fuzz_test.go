package label

import (
	"errors"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"orders-eos:demo-orders:0:42", "j:h0123456789abcdef:w1:0", "a:b:c:d", ""} {
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
