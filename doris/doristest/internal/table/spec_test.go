package table

import (
	"errors"
	"testing"
)

// docs/doris-facts.md §1.4: header error texts.
func TestParseLoadSpecErrors_Section1_4(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    []string
		want string
		code string
	}{
		{"format parquet", []string{"format", "parquet"}, "unknown data format, format=parquet", "DATA_FILE_TYPE_ERROR"},
		{"format unknown", []string{"format", "xml"}, "unknown data format, format=xml", "DATA_FILE_TYPE_ERROR"},
		{"enclose", []string{"enclose", "ab"}, "enclose must be single-char, actually is ab", "INVALID_ARGUMENT"},
		{"escape", []string{"escape", `\\`}, `escape must be single-char, actually is \\`, "INVALID_ARGUMENT"},
		{"skip_lines", []string{"skip_lines", "-1"}, "Invalid 'skip_lines': -1", "INVALID_ARGUMENT"},
		{"skip_lines text", []string{"skip_lines", "x"}, "Invalid 'skip_lines': x", "INVALID_ARGUMENT"},
		{"strict_mode", []string{"strict_mode", "yes"}, "Invalid strict mode format. Must be bool type", "INVALID_ARGUMENT"},
		{"merge_type", []string{"merge_type", "UPSERT"}, "Invalid merge type UPSERT", "INVALID_ARGUMENT"},
		{"merge without delete", []string{"merge_type", "merge"}, "Excepted DELETE ON clause when merge type is MERGE.", "INVALID_ARGUMENT"},
		{"delete without merge", []string{"delete", "k=1"}, "Not support DELETE ON clause when merge type is not MERGE.", "INVALID_ARGUMENT"},
		{"delete with append", []string{"merge_type", "APPEND", "delete", "k=1"}, "Not support DELETE ON clause when merge type is not MERGE.", "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseLoadSpec(hdr(c.h...))
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code || e.Message() != "["+c.code+"]"+c.want {
				t.Fatalf("error %#v: want code %s", err, c.code)
			}
		})
	}
}

func TestParseLoadSpecValues_Section1_4(t *testing.T) {
	t.Parallel()
	s, err := ParseLoadSpec(hdr())
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != "csv" || s.ColumnSeparator != "\t" || s.LineDelimiter != "\n" || s.MergeType != "APPEND" || s.MaxFilterRatio != 0 {
		t.Fatalf("defaults: %+v", s)
	}
	// Newest BE: neither read_json_by_line nor strip_outer_array → by line.
	if !s.ReadJSONByLine {
		t.Fatal("read_json_by_line should default to true when neither header is set")
	}
	s, _ = ParseLoadSpec(hdr("strip_outer_array", "TRUE"))
	if s.ReadJSONByLine || !s.StripOuterArray {
		t.Fatalf("strip_outer_array given: by-line %v strip %v", s.ReadJSONByLine, s.StripOuterArray)
	}
	s, _ = ParseLoadSpec(hdr("read_json_by_line", "false"))
	if s.ReadJSONByLine {
		t.Fatal("explicit read_json_by_line=false must stick")
	}
	s, err = ParseLoadSpec(hdr("format", "JSON", "column_separator", `\x01`, "line_delimiter", `\x0d\x0a`,
		"max_filter_ratio", "0.25abc", "strict_mode", "True", "merge_type", "merge", "delete", "op='d'",
		"hidden_columns", "__DORIS_DELETE_SIGN__, x", "partial_columns", "tRuE", "two", "x",
		"function_column.sequence_col", "ts", "trim_double_quotes", "yes", "skip_lines", "3",
		"num_as_string", "true", "fuzzy_parse", "false", "enclose", `"`, "escape", `\`))
	if err != nil {
		t.Fatal(err)
	}
	want := LoadSpec{Format: "json", ColumnSeparator: "\x01", LineDelimiter: "\r\n", MaxFilterRatio: 0.25,
		StrictMode: true, MergeType: "MERGE", Delete: "op='d'", HiddenColumns: []string{"__DORIS_DELETE_SIGN__", "x"},
		PartialColumns: true, SequenceCol: "ts", SkipLines: 3, NumAsString: true, Enclose: `"`, Escape: `\`, ReadJSONByLine: true}
	if s.Format != want.Format || s.ColumnSeparator != want.ColumnSeparator || s.LineDelimiter != want.LineDelimiter ||
		s.MaxFilterRatio != want.MaxFilterRatio || !s.StrictMode || s.MergeType != want.MergeType || s.Delete != want.Delete ||
		len(s.HiddenColumns) != 2 || s.HiddenColumns[1] != "x" || !s.PartialColumns || s.SequenceCol != "ts" ||
		s.TrimDoubleQuotes || s.SkipLines != 3 || !s.NumAsString || s.FuzzyParse || s.Enclose != `"` || s.Escape != `\` {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	for _, f := range []string{"csv_with_names", "CSV_WITH_NAMES_AND_TYPES", "csv", ""} {
		if _, err := ParseLoadSpec(hdr("format", f)); err != nil {
			t.Fatalf("format %q: %v", f, err)
		}
	}
	if s, _ := ParseLoadSpec(hdr("max_filter_ratio", "junk")); s.MaxFilterRatio != 0 {
		t.Fatalf("strtod of junk = %v, want 0", s.MaxFilterRatio)
	}
	if s, _ := ParseLoadSpec(hdr("column_separator", "||")); s.ColumnSeparator != "||" {
		t.Fatalf("multi-char separator %q", s.ColumnSeparator)
	}
}
