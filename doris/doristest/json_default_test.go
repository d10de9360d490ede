package doristest

import "testing"

// JSON with neither read_json_by_line nor strip_outer_array: this emulator
// follows Doris 4.0 / master (be stream_load.cpp _process_put, apache/doris
// PR #55861): read_json_by_line=true, so a newline-delimited body loads every
// line. An empty header value counts as unset (the BE tests
// header(...).empty()). Doris 2.1 / 3.0 read such a body as one document.
func TestStreamLoad_JSONDefaultReadByLine_PR55861(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	body := `{"id":1,"v":"a"}` + "\n" + `{"id":2,"v":"b"}` + "\n"
	m, raw := load(t, s, "orders", body, hdr{"format": "json"})
	wantEq(t, "Status "+raw, m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)

	// Empty values: still "neither".
	m, raw = load(t, s, "orders", body, hdr{"format": "json", "read_json_by_line": "", "strip_outer_array": ""})
	wantEq(t, "empty values "+raw, m["Status"], any("Success"))
	wantEq(t, "empty values NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)

	// An explicit strip_outer_array takes the array form.
	m, raw = load(t, s, "orders", `[{"id":3,"v":"c"},{"id":4,"v":"d"}]`, hdr{"format": "json", "strip_outer_array": "true"})
	wantEq(t, "array "+raw, m["Status"], any("Success"))
	wantEq(t, "array NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
}
