package table

import (
	"net/http"
	"strconv"
	"strings"
)

// Header names of docs/doris-facts.md §1.4 that shape data.
const (
	hFormat           = "format"
	hColumnSeparator  = "column_separator"
	hLineDelimiter    = "line_delimiter"
	hEnclose          = "enclose"
	hEscape           = "escape"
	hTrimDoubleQuotes = "trim_double_quotes"
	hSkipLines        = "skip_lines"
	hColumns          = "columns"
	hWhere            = "where"
	hStripOuterArray  = "strip_outer_array"
	hReadJSONByLine   = "read_json_by_line"
	hJSONPaths        = "jsonpaths"
	hJSONRoot         = "json_root"
	hStrictMode       = "strict_mode"
	hMergeType        = "merge_type"
	hDelete           = "delete"
	hSequenceCol      = "function_column.sequence_col"
	hHiddenColumns    = "hidden_columns"
	hPartialColumns   = "partial_columns"
	hMaxFilterRatio   = "max_filter_ratio"
	hNumAsString      = "num_as_string"
	hFuzzyParse       = "fuzzy_parse"
)

// Load formats the emulator parses.
const (
	FormatCSV                  = "csv"
	FormatCSVWithNames         = "csv_with_names"
	FormatCSVWithNamesAndTypes = "csv_with_names_and_types"
	FormatJSON                 = "json"
)

// Merge types (docs/doris-facts.md §1.4 `merge_type`).
const (
	MergeAppend = "APPEND"
	MergeDelete = "DELETE"
	MergeMerge  = "MERGE"
)

// boolHeader: only "true" (case-insensitive) enables (docs/doris-facts.md §1.4).
func boolHeader(h http.Header, name string) bool {
	return strings.EqualFold(h.Get(name), "true")
}

// ParseLoadSpec reads a LoadSpec from Stream Load headers. Its errors carry
// the BE's message text (docs/doris-facts.md §1.4), e.g. "Invalid merge type x";
// they are *Error values.
func ParseLoadSpec(h http.Header) (LoadSpec, error) {
	s := LoadSpec{Format: FormatCSV, ColumnSeparator: "\t", LineDelimiter: "\n", MergeType: MergeAppend}
	switch f := strings.ToLower(h.Get(hFormat)); f {
	case "", FormatCSV:
	case FormatCSVWithNames, FormatCSVWithNamesAndTypes, FormatJSON:
		s.Format = f
	default:
		// parquet, orc, arrow, … are real formats but not emulated; unknown
		// names get the same text in Doris.
		return s, &Error{Code: "DATA_FILE_TYPE_ERROR", Msg: "unknown data format, format=" + h.Get(hFormat)}
	}
	var err error
	if v := h.Get(hColumnSeparator); v != "" {
		if s.ColumnSeparator, err = convertSeparator(v); err != nil {
			return s, err
		}
	}
	if v := h.Get(hLineDelimiter); v != "" {
		if s.LineDelimiter, err = convertSeparator(v); err != nil {
			return s, err
		}
	}
	if v := h.Get(hEnclose); v != "" {
		if len(v) != 1 {
			return s, beInvalid("enclose must be single-char, actually is %s", v)
		}
		s.Enclose = v
	}
	if v := h.Get(hEscape); v != "" {
		if len(v) != 1 {
			return s, beInvalid("escape must be single-char, actually is %s", v)
		}
		s.Escape = v
	}
	s.TrimDoubleQuotes = boolHeader(h, hTrimDoubleQuotes)
	if v := h.Get(hSkipLines); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s, beInvalid("Invalid 'skip_lines': %s", v)
		}
		s.SkipLines = n
	}
	s.Columns = h.Get(hColumns)
	s.Where = h.Get(hWhere)
	s.StripOuterArray = boolHeader(h, hStripOuterArray)
	// Doris 4.0 / master BE (stream_load.cpp _process_put, apache/doris PR
	// #55861, merged 2025-09-28): with neither read_json_by_line nor
	// strip_outer_array set (an empty value counts as unset: the BE tests
	// header(...).empty()), read_json_by_line=true. Doris 2.1 and 3.0 read
	// such a body as one JSON document instead.
	if h.Get(hReadJSONByLine) == "" && h.Get(hStripOuterArray) == "" {
		s.ReadJSONByLine = true
	} else {
		s.ReadJSONByLine = boolHeader(h, hReadJSONByLine)
	}
	s.JSONPaths = h.Get(hJSONPaths)
	s.JSONRoot = h.Get(hJSONRoot)
	if v := h.Get(hStrictMode); v != "" {
		switch strings.ToLower(v) {
		case "true":
			s.StrictMode = true
		case "false":
		default:
			return s, beInvalid("Invalid strict mode format. Must be bool type")
		}
	}
	if v := h.Get(hMergeType); v != "" {
		switch u := strings.ToUpper(v); u {
		case MergeAppend, MergeDelete, MergeMerge:
			s.MergeType = u
		default:
			return s, beInvalid("Invalid merge type %s", v)
		}
	}
	s.Delete = h.Get(hDelete)
	if s.MergeType == MergeMerge && s.Delete == "" {
		return s, beInvalid("Excepted DELETE ON clause when merge type is MERGE.")
	}
	if s.MergeType != MergeMerge && s.Delete != "" {
		return s, beInvalid("Not support DELETE ON clause when merge type is not MERGE.")
	}
	s.SequenceCol = h.Get(hSequenceCol)
	if v := h.Get(hHiddenColumns); v != "" {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				s.HiddenColumns = append(s.HiddenColumns, c)
			}
		}
	}
	s.PartialColumns = boolHeader(h, hPartialColumns)
	if v := h.Get(hMaxFilterRatio); v != "" {
		// BE uses strtod: the longest valid prefix, 0 when none.
		s.MaxFilterRatio = strtod(v)
	}
	s.NumAsString = boolHeader(h, hNumAsString)
	s.FuzzyParse = boolHeader(h, hFuzzyParse)
	return s, nil
}

// strtod parses the longest leading float like C strtod; 0 when none.
func strtod(v string) float64 {
	v = strings.TrimLeft(v, " \t\n")
	for n := len(v); n > 0; n-- {
		if f, err := strconv.ParseFloat(v[:n], 64); err == nil {
			return f
		}
	}
	return 0
}
