package doristest

import (
	"testing"
)

// column_separator / line_delimiter are unescaped by the FE (fe
// analysis/Separator.java via StreamLoadTask.setColumnSeparator /
// setLineDelimiter): the Go SDK's default CSV sends line_delimiter `\n`.
func TestStreamLoad_EscapedSeparators_SeparatorJava(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "esc", "column_separator": `\t`, "line_delimiter": `\n`})
	wantEq(t, "escaped Status "+raw, m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
	m, raw = load(t, s, "orders", "3\x01c\n4\x01d\n", hdr{"label": "hex", "column_separator": `\x01`, "line_delimiter": `\x0A`})
	wantEq(t, "hex Status "+raw, m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
	rows, err := s.Rows(testDB, "orders")
	if err != nil || len(rows) != 4 {
		t.Fatalf("rows = %v, %v; want 4", rows, err)
	}
}

// A bad hex separator is an AnalysisException from streamLoadPut: the txn was
// begun and is rolled back.
func TestStreamLoad_BadHexSeparator_SeparatorJava(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n", hdr{"label": "badhex", "line_delimiter": `\x0`})
	wantEq(t, "Status "+raw, m["Status"], any("Fail"))
	wantEq(t, "Message", m["Message"], any("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Hex str length error"))
	if num(t, m, "TxnId") < 0 {
		t.Fatalf("TxnId %d: the txn is begun before streamLoadPut", num(t, m, "TxnId"))
	}
	tx, err := s.TxnByLabel(testDB, "badhex")
	if err != nil || tx.Status != "ABORTED" {
		t.Fatalf("txn %+v, %v; want ABORTED", tx, err)
	}
}
