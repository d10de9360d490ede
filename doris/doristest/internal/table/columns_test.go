package table

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func mapTable(t *testing.T) *Table {
	return newTable(t, schema.DuplicateKeys, []string{"k"}, nil,
		col("k", "INT NOT NULL"), col("v", "BIGINT"), col("name", "VARCHAR(16)"),
		col("d", "DECIMAL(8,2) DEFAULT=1.5"), col("flag", "TINYINT NOT NULL DEFAULT=7"))
}

// docs/doris-facts.md §1.4 `columns`: positional source names, mappings, defaults.
func TestColumnsMapping_Section1_4(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, columns, body string
		want                [][]any
	}{
		{"reorder", "name,k", "a,1\n", [][]any{{int64(1), nil, "a", "1.50", int64(7)}}},
		{"temp and arithmetic", "k,tmp,v=tmp*2+1", "1,20\n", [][]any{{int64(1), int64(41), nil, "1.50", int64(7)}}},
		{"division decimal", "k,tmp,d=tmp/3", "1,10\n", [][]any{{int64(1), nil, nil, "3.33", int64(7)}}},
		{"division by zero is null", "k,tmp,v=tmp/0", "1,10\n", [][]any{{int64(1), nil, nil, "1.50", int64(7)}}},
		{"rename", "k,x,name=x", "1,hello\n", [][]any{{int64(1), nil, "hello", "1.50", int64(7)}}},
		{"upper concat", "k,x,name=upper(concat(x,'-',k))", "1,ab\n", [][]any{{int64(1), nil, "AB-1", "1.50", int64(7)}}},
		{"mapping chain", "k,x,tmp2=x-1,v=tmp2*10", "1,5\n", [][]any{{int64(1), int64(40), nil, "1.50", int64(7)}}},
		{"backquoted", "`k`,`v`", "1,2\n", [][]any{{int64(1), int64(2), nil, "1.50", int64(7)}}},
		{"mapping only keeps schema as source", "k,v,name,d,flag,v=v+100", "1,2,n,3,4\n",
			[][]any{{int64(1), int64(102), "n", "3.00", int64(4)}}},
		{"literal mapping", "k,name='const'", "1\n", [][]any{{int64(1), nil, "const", "1.50", int64(7)}}},
		{"negation and precedence", "k,x,v=-(x+1)*2", "1,4\n", [][]any{{int64(1), int64(-10), nil, "1.50", int64(7)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := mapTable(t)
			b := commit(t, tb, hdr("column_separator", ",", "columns", c.columns), c.body)
			counts(t, b, 1, 0, 0)
			if got := tb.Rows(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
		})
	}
}

func TestColumnsErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, columns, want string }{
		{"no default", "v,name", "Column has no default value. column: k"},
		{"function not emulated", "k,x,v=hll_hash(x)", "function hll_hash"},
		{"unknown reference", "k,v=nope+1", "Unknown column 'nope'"},
		{"odd item", "k,v+1", "not emulated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := tryLoad(mapTable(t), hdr("columns", c.columns), "1\n")
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Msg, c.want) || e.Code != "ANALYSIS_ERROR" || !e.FromFE {
				t.Fatalf("err %v, want containing %q", err, c.want)
			}
			if !strings.HasPrefix(e.Message(), "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = ") {
				t.Fatalf("message %q", e.Message())
			}
		})
	}
}

func TestCurrentTimestampDefault(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("ts", "DATETIME NOT NULL DEFAULT=CURRENT_TIMESTAMP"))
	tb.SetClock(func() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) })
	commit(t, tb, hdr("columns", "k"), "1\n")
	if got := tb.Rows(); got[0][1] != "2025-03-04 05:06:07" {
		t.Fatalf("rows %v", got)
	}
}

// docs/doris-facts.md §1.4 `where`: rows failing it are unselected, not filtered.
func TestWhere_Section1_4(t *testing.T) {
	t.Parallel()
	body := "1,10,a\n2,20,b\n3,\\N,c\n4,40,d\n5,x,e\n"
	cases := []struct {
		where string
		keys  []int64
	}{
		{"v > 15", []int64{2, 4}},
		{"v >= 20 AND v < 40", []int64{2}},
		{"v = 10 OR name = 'd'", []int64{1, 4}},
		{"NOT (v = 10)", []int64{2, 4}},
		{"v IS NULL", []int64{3, 5}},
		{"v IS NOT NULL", []int64{1, 2, 4}},
		{"k IN (1, 3, 5)", []int64{1, 3, 5}},
		{"k NOT IN (1, 3)", []int64{2, 4, 5}},
		{"name != 'a' and name <> 'b'", []int64{3, 4, 5}},
		{"v * 2 = 80", []int64{4}},
		{"upper(name) = 'C'", []int64{3}},
		{"d = 1.5", []int64{1, 2, 3, 4, 5}},
	}
	for _, c := range cases {
		t.Run(c.where, func(t *testing.T) {
			t.Parallel()
			tb := mapTable(t)
			b := commit(t, tb, hdr("column_separator", ",", "columns", "k,v,name", "where", c.where), body)
			counts(t, b, 5, 0, int64(5-len(c.keys)))
			var got []int64
			for _, r := range tb.Rows() {
				got = append(got, r[0].(int64))
			}
			if !reflect.DeepEqual(got, c.keys) {
				t.Fatalf("keys %v, want %v", got, c.keys)
			}
		})
	}
	if _, err := tryLoad(mapTable(t), hdr("where", "nope = 1"), ""); err == nil {
		t.Fatal("unknown column in where accepted")
	}
	if _, err := tryLoad(mapTable(t), hdr("where", "name LIKE 'a%'"), ""); err == nil || !strings.Contains(err.Error(), "not emulated") {
		t.Fatalf("LIKE: %v", err)
	}
}

// Strict-mode conversion failures are filtered before `where`; NOT NULL
// violations are checked after it (docs/doris-facts.md §8 counters).
func TestWhereOrderVersusFilter(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", "INT NOT NULL"))
	b := load(t, tb, hdr("column_separator", ",", "where", "k > 1"), "1,\\N\n2,\\N\n3,3\n")
	counts(t, b, 3, 1, 1)
	b = load(t, tb, hdr("column_separator", ",", "where", "k > 1", "strict_mode", "true"), "1,x\n3,3\n")
	counts(t, b, 2, 1, 0)
}
