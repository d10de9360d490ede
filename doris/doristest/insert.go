package doristest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/table"
)

// Behavior of INSERT INTO … VALUES / SELECT over the MySQL front (issue 26):
//
//   - The rows go through the same table model as a Stream Load
//     (table.Table.Prepare with a JSON-lines body): Duplicate appends, Unique
//     merges (sequence column, __DORIS_DELETE_SIGN__), Aggregate
//     aggregates.
//   - One INSERT is one transaction with its own label, "insert_" and two
//     hex halves of a query id, as Doris names INSERT labels; it is
//     VISIBLE on success and listed by SHOW TRANSACTION like a Stream Load.
//   - As Doris's enable_insert_strict (default true), a row that does not
//     convert fails the whole INSERT and the transaction is ABORTED.
func (b mysqlBackend) Insert(db, tbl string, columns []string, rows [][]any) (mysqlfront.InsertResult, error) {
	s := b.s
	s.RunCleaner()
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, r := range rows {
		if len(r) != len(columns) {
			return mysqlfront.InsertResult{}, fmt.Errorf("Column count doesn't match value count")
		}
		obj := make(map[string]any, len(columns))
		for i, c := range columns {
			obj[c] = r[i]
		}
		if err := enc.Encode(obj); err != nil {
			return mysqlfront.InsertResult{}, fmt.Errorf("encode row: %w", err)
		}
	}
	var q [16]byte
	_, _ = rand.Read(q[:])
	label := fmt.Sprintf("insert_%x_%x", q[:8], q[8:])
	s.mu.Lock()
	t, ferr := s.beginLocked(beginReq{db: db, table: tbl, label: label, trusted: true})
	s.mu.Unlock()
	if ferr != nil {
		return mysqlfront.InsertResult{}, fmt.Errorf("%s", ferr.msg)
	}
	h := http.Header{}
	h.Set("format", "json")
	h.Set("read_json_by_line", "true")
	h.Set("strict_mode", "true") // enable_insert_strict
	// The INSERT's column list is the load's: a hidden column it names
	// (__DORIS_DELETE_SIGN__, __DORIS_SEQUENCE_COL__) is read as Stream
	// Load's columns header reads it, an unknown one is refused.
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = "`" + strings.ReplaceAll(c, "`", "``") + "`"
	}
	h.Set("columns", strings.Join(quoted, ","))
	spec, err := table.ParseLoadSpec(h)
	if err != nil {
		s.rollback(t, err.Error())
		return mysqlfront.InsertResult{}, err
	}
	batch, err := t.tbl.Prepare(spec, &body)
	if err != nil {
		msg := loadErrMessage(err)
		s.rollback(t, msg)
		return mysqlfront.InsertResult{}, fmt.Errorf("%s", msg)
	}
	if batch.FilteredRows > 0 {
		first := batch.FirstErrorMsg
		if first == "" && len(batch.ErrorLines) > 0 {
			first = batch.ErrorLines[0]
		}
		msg := "Insert has filtered data in strict mode. first error: " + first
		s.rollback(t, msg)
		return mysqlfront.InsertResult{}, fmt.Errorf("%s", msg)
	}
	s.mu.Lock()
	visible, ferr := s.commitLoadLocked(t, batch)
	s.mu.Unlock()
	if ferr != nil {
		s.rollback(t, ferr.msg)
		return mysqlfront.InsertResult{}, fmt.Errorf("%s", ferr.msg)
	}
	st := doris.TxnCommitted
	if visible {
		st = doris.TxnVisible
	}
	return mysqlfront.InsertResult{Label: label, TxnID: t.id, Status: string(st), Rows: batch.LoadedRows()}, nil
}
