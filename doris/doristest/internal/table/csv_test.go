package table

import (
	"reflect"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func dupKV(t *testing.T) *Table {
	return newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(32)"))
}

// docs/doris-facts.md §1.4: column_separator, line_delimiter, enclose/escape,
// trim_double_quotes, skip_lines, csv_with_names[_and_types], `\N`.
func TestCSVParsing_Section1_4(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		h        []string
		body     string
		want     [][]any
		total    int64
		filtered int64
	}{
		{"default tab", nil, "1\ta\n2\tb\n", [][]any{{int64(1), "a"}, {int64(2), "b"}}, 2, 0},
		{"no trailing newline", nil, "1\ta\n2\tb", [][]any{{int64(1), "a"}, {int64(2), "b"}}, 2, 0},
		{"empty lines skipped", nil, "\n1\ta\n\n\n", [][]any{{int64(1), "a"}}, 1, 0},
		{"multi-char separators", []string{"column_separator", "||", "line_delimiter", "##"}, "1||a##2||b|c##",
			[][]any{{int64(1), "a"}, {int64(2), "b|c"}}, 2, 0},
		{"hex separator", []string{"column_separator", `\x01`, "line_delimiter", `\x0a`}, "1\x01a\n", [][]any{{int64(1), "a"}}, 1, 0},
		{"null marker", []string{"column_separator", ","}, "1,\\N\n\\N,x\n", [][]any{{nil, "x"}, {int64(1), nil}}, 2, 0},
		{"empty string is not null", []string{"column_separator", ","}, "1,\n", [][]any{{int64(1), ""}}, 1, 0},
		{"enclose", []string{"column_separator", ",", "enclose", `"`}, "1,\"a,b\"\n2,\"x\ny\"\n",
			[][]any{{int64(1), "a,b"}, {int64(2), "x\ny"}}, 2, 0},
		{"enclose escape", []string{"column_separator", ",", "enclose", `'`, "escape", `\`}, `1,'it\'s'` + "\n",
			[][]any{{int64(1), "it's"}}, 1, 0},
		{"trim_double_quotes", []string{"column_separator", ",", "trim_double_quotes", "true"}, "\"1\",\"a\"\n",
			[][]any{{int64(1), "a"}}, 1, 0},
		{"quotes kept without trim", []string{"column_separator", ","}, "1,\"a\"\n", [][]any{{int64(1), `"a"`}}, 1, 0},
		{"skip_lines", []string{"skip_lines", "2"}, "x\ty\nz\n1\ta\n", [][]any{{int64(1), "a"}}, 1, 0},
		{"csv_with_names", []string{"format", "csv_with_names"}, "k\tv\n1\ta\n", [][]any{{int64(1), "a"}}, 1, 0},
		{"csv_with_names_and_types", []string{"format", "csv_with_names_and_types"}, "k\tv\nINT\tVARCHAR\n1\ta\n",
			[][]any{{int64(1), "a"}}, 1, 0},
		{"too few columns filtered", nil, "1\n2\tb\n", [][]any{{int64(2), "b"}}, 2, 1},
		{"too many columns filtered", nil, "1\ta\tx\n", nil, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := dupKV(t)
			b := commit(t, tb, hdr(c.h...), c.body)
			counts(t, b, c.total, c.filtered, 0)
			if b.LoadBytes != int64(len(c.body)) {
				t.Fatalf("LoadBytes %d, want %d", b.LoadBytes, len(c.body))
			}
			got := tb.Rows()
			if len(got) == 0 && len(c.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
		})
	}
}

func TestCSVErrorLines_Section8(t *testing.T) {
	t.Parallel()
	tb := dupKV(t)
	var sb strings.Builder
	for range 150 {
		sb.WriteString("only-one-field\n")
	}
	b := load(t, tb, hdr(), sb.String())
	counts(t, b, 150, 150, 0)
	if len(b.ErrorLines) != maxErrorLines {
		t.Fatalf("%d error lines, want the bound %d", len(b.ErrorLines), maxErrorLines)
	}
	if !strings.HasPrefix(b.ErrorLines[0], "Reason: actual column number in csv file is less than schema column number") ||
		!strings.Contains(b.ErrorLines[0], "src line [only-one-field]") {
		t.Fatalf("error line %q", b.ErrorLines[0])
	}
}
