package label

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

var dorisRE = regexp.MustCompile(Regexp)

func TestBudgetAddsUpToDorisMax(t *testing.T) {
	t.Parallel()
	// docs/doris-facts.md §4: label_regex_length defaults to 128.
	if got := MaxPrefixLen + MaxTableTagLen + MaxScopeLen + MaxCheckpointLen + 3; got != MaxLen {
		t.Fatalf("field budget = %d, want %d", got, MaxLen)
	}
	if MaxPrefixLen != 49 {
		t.Fatalf("MaxPrefixLen = %d, want 49", MaxPrefixLen)
	}
	if Regexp != `^[-_A-Za-z0-9:]{1,128}$` {
		t.Fatalf("Regexp = %s", Regexp)
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 30)
	tests := []struct {
		name, prefix, db, table, scope string
		cp                             uint64
		want                           string
	}{
		{"plain", "orders-eos", "demo", "orders", "0", 42, "orders-eos:demo-orders:0:42"},
		{"underscores", "job_1", "my_db", "order_state_eos", "w-3", 0, "job_1:my_db-order_state_eos:w-3:0"},
		{"no db", "j", "", "t", "0", 7, "j:-t:0:7"},
		{"max checkpoint", "j", "d", "t", "0", 18446744073709551615, "j:d-t:0:18446744073709551615"},
		{"dash in table is hashed", "j", "d", "my-table", "0", 1, "j:" + TableTag("d", "my-table") + ":0:1"},
		{"too long is hashed", "j", long, long, "0", 1, "j:" + TableTag(long, long) + ":0:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Build(tc.prefix, tc.db, tc.table, tc.scope, tc.cp)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Build = %q, want %q", got, tc.want)
			}
			if err := Validate(got); err != nil || !dorisRE.MatchString(got) {
				t.Fatalf("built label %q does not validate: %v", got, err)
			}
			l, err := Parse(got)
			if err != nil {
				t.Fatalf("Parse(%q): %v", got, err)
			}
			want := Label{Prefix: tc.prefix, TableTag: TableTag(tc.db, tc.table), Scope: tc.scope, Checkpoint: tc.cp}
			if l != want {
				t.Fatalf("Parse = %+v, want %+v", l, want)
			}
		})
	}
}

func TestBuildWorstCaseFits(t *testing.T) {
	t.Parallel()
	prefix := strings.Repeat("p", MaxPrefixLen)
	scope := strings.Repeat("s", MaxScopeLen)
	db := strings.Repeat("d", 20)
	table := strings.Repeat("t", MaxTableTagLen-21) // verbatim tag of exactly MaxTableTagLen
	got, err := Build(prefix, db, table, scope, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxLen {
		t.Fatalf("worst-case label has %d characters, want %d: %q", len(got), MaxLen, got)
	}
	if err := Validate(got); err != nil {
		t.Fatal(err)
	}
}

func TestTableTag(t *testing.T) {
	t.Parallel()
	tests := []struct{ db, table, want string }{
		{"demo", "orders", "demo-orders"},
		{"Demo", "Orders", "Demo-Orders"}, // case kept: Doris names are case-sensitive
		{"a_b", "c", "a_b-c"},
		{"", "orders", "-orders"},
	}
	for _, tc := range tests {
		if got := TableTag(tc.db, tc.table); got != tc.want {
			t.Errorf("TableTag(%q, %q) = %q, want %q", tc.db, tc.table, got, tc.want)
		}
	}
	// Pairs that a naive join would alias must differ.
	pairs := [][2]string{
		{"a_b", "c"}, {"a", "b_c"}, {"a-b", "c"}, {"a", "b-c"}, {"a.b", "c"}, {"a", "b.c"},
		{"a", "bc"}, {"ab", "c"}, {"数据", "表"}, {"数据表", ""}, {"", "数据表"},
		{strings.Repeat("x", 39), ""}, {strings.Repeat("x", 40), ""}, {"", strings.Repeat("x", 40)},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		tag := TableTag(p[0], p[1])
		if prev, ok := seen[tag]; ok {
			t.Errorf("TableTag collision: %q and %q both give %q", prev, p, tag)
		}
		seen[tag] = p
		if !validTableTag(tag) {
			t.Errorf("TableTag(%q) = %q is not a valid tag", p, tag)
		}
		if TableTag(p[0], p[1]) != tag {
			t.Errorf("TableTag(%q) is not deterministic", p)
		}
	}
	if got := TableTag("a-b", "c"); len(got) != 17 || got[0] != 'h' {
		t.Errorf("hashed tag = %q, want h + 16 hex", got)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		label   string
		wantErr string // substring; "" = valid
	}{
		{"a", ""},
		{"job:demo-orders:0:1", ""},
		{strings.Repeat("a", 128), ""},
		{"", "empty"},
		{strings.Repeat("a", 129), "129 characters, Doris allows at most 128"},
		{"a/b", `character '/' at byte 1`},
		{"a.b", `character '.' at byte 1`},
		{"aé", `character 'é' at byte 1`},
		{"a b", `character ' ' at byte 1`},
	}
	for _, tc := range tests {
		err := Validate(tc.label)
		if match := dorisRE.MatchString(tc.label); match != (err == nil) {
			t.Errorf("Validate(%q) = %v, but Doris regexp match = %v", tc.label, err, match)
		}
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want nil", tc.label, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Validate(%q) = nil, want error containing %q", tc.label, tc.wantErr)
			continue
		}
		var le *Error
		if !errors.As(err, &le) || le.Input != tc.label {
			t.Errorf("Validate(%q) error %v does not name the label", tc.label, err)
		}
		if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), Regexp) {
			t.Errorf("Validate(%q) = %q, want it to contain %q and the Doris rule", tc.label, err, tc.wantErr)
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ prefix, wantErr string }{
		{"orders-eos", ""},
		{"A_b-9", ""},
		{strings.Repeat("p", MaxPrefixLen), ""},
		{"", "empty"},
		{strings.Repeat("p", MaxPrefixLen+3), "52 characters, 3 too many; want 1 to 49 characters of [A-Za-z0-9_-]"},
		{"orders:eos", "character ':' at byte 6"},
		{"orders.eos", "character '.' at byte 6"},
	}
	for _, tc := range tests {
		err := ValidatePrefix(tc.prefix)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("ValidatePrefix(%q) = %v", tc.prefix, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ValidatePrefix(%q) = %v, want error containing %q", tc.prefix, err, tc.wantErr)
			continue
		}
		if !strings.Contains(err.Error(), "take up to 79") {
			t.Errorf("ValidatePrefix(%q) = %q, want the room left explained", tc.prefix, err)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ prefix, scope, field string }{
		{"", "0", "prefix"},
		{"a b", "0", "prefix"},
		{"job", "", "scope"},
		{"job", "w:1", "scope"},
		{"job", strings.Repeat("s", MaxScopeLen+1), "scope"},
	}
	for _, tc := range tests {
		_, err := Build(tc.prefix, "db", "t", tc.scope, 1)
		var le *Error
		if !errors.As(err, &le) || le.Field != tc.field {
			t.Errorf("Build(%q, scope %q) = %v, want *Error for field %s", tc.prefix, tc.scope, err, tc.field)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ label, wantErr string }{
		{"job:db-t:0", "3 ':'-separated fields"},
		{"job:db-t:0:1:2:3", "6 ':'-separated fields"},
		{"job:db-t:0:01", "leading zero"},
		{"job:db-t:0:", "empty"},
		{"job:db-t:0:-1", "not a digit"},
		{"job:db-t:0:18446744073709551616", "out of range"},
		{"job:dbt:0:1", "table tag"},               // no dash and not a hash
		{"job:a-b-c:0:1", "table tag"},             // two dashes: never built
		{"job:hABCDEF0123456789:0:1", "table tag"}, // upper-case hex
		{":db-t:0:1", "prefix"},
		{"job:db-t::1", "scope"},
		{"job:db.t:0:1", "'.'"},
		{"job:" + strings.Repeat("d", 41) + "-t:0:1", "table tag"}, // verbatim too long
	}
	for _, tc := range tests {
		_, err := Parse(tc.label)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tc.label, err, tc.wantErr)
			continue
		}
		var le *Error
		if !errors.As(err, &le) || le.Input != tc.label {
			t.Errorf("Parse(%q) error %v does not name the label", tc.label, err)
		}
	}
}
