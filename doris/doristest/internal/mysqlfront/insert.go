package mysqlfront

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// InsertResult is what one INSERT did: its transaction, as SHOW
// TRANSACTION lists it, and the rows loaded.
type InsertResult struct {
	Label  string
	TxnID  int64
	Status string
	Rows   int64
}

// pendingInsert is an INSERT held in an explicit transaction (BEGIN …
// COMMIT) until COMMIT.
type pendingInsert struct {
	db, table string
	columns   []string
	rows      [][]any
}

// insert handles INSERT INTO [db.]t [(c, …)] VALUES (…), … and INSERT INTO
// [db.]t [(c, …)] SELECT …. Values must be literals (numbers, strings, NULL,
// TRUE/FALSE). Outside a transaction the rows load at once, as one Doris
// transaction (Backend.Insert); after BEGIN they wait for COMMIT.
func (ss *session) insert(ctx context.Context, st stmt) (*mysql.Result, error) {
	if !st.words("INSERT", "INTO") {
		return nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, 2)
	if name.table == "" {
		return nil, syntaxError(st)
	}
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return nil, err
	}
	t, err := ss.s.b.Table(db, name.table)
	if err != nil {
		return nil, backendError(err)
	}
	var cols []string
	if st.at(n).isPunct("(") {
		end := matchParen(st.toks, n)
		if end >= len(st.toks) {
			return nil, syntaxError(st)
		}
		known := make(map[string]string, len(t.Columns))
		for _, c := range t.Columns {
			known[strings.ToLower(c.Name)] = c.Name
		}
		named := map[string]bool{}
		for _, it := range splitTop(st.toks[n+1 : end]) {
			if len(it) != 1 || it[0].name() == "" {
				return nil, syntaxError(st)
			}
			// Doris binds every named column to the table (names are
			// case-insensitive) and refuses one it lacks or one named
			// twice; the load below would drop an unknown one silently.
			c, ok := known[strings.ToLower(it[0].name())]
			if !ok && isHiddenColumn(it[0].name()) {
				// __DORIS_DELETE_SIGN__ / __DORIS_SEQUENCE_COL__: not
				// listed columns; the table model reads them as Stream
				// Load's columns header does.
				c, ok = strings.ToUpper(it[0].name()), true
			}
			if !ok {
				return nil, dorisError(mysql.ER_BAD_FIELD_ERROR, "Unknown column '%s' in table '%s'", it[0].name(), name.table)
			}
			if named[c] {
				return nil, dorisError(mysql.ER_FIELD_SPECIFIED_TWICE, "Column '%s' specified twice", it[0].name())
			}
			named[c] = true
			cols = append(cols, c)
		}
		n = end + 1
	} else {
		for _, c := range t.Columns {
			if !isHiddenColumn(c.Name) {
				cols = append(cols, c.Name)
			}
		}
	}
	var rows [][]any
	switch {
	case st.at(n).is("VALUES") || st.at(n).is("VALUE"):
		k := n + 1
		if k >= len(st.toks) {
			return nil, syntaxError(st) // VALUES without a row
		}
		for k < len(st.toks) {
			if !st.toks[k].isPunct("(") {
				return nil, syntaxError(st)
			}
			end := matchParen(st.toks, k)
			if end >= len(st.toks) {
				return nil, syntaxError(st)
			}
			var row []any
			for _, it := range splitTop(st.toks[k+1 : end]) {
				if len(it) == 0 {
					// VALUES (1,,2), VALUES (): Doris's parser refuses it.
					return nil, syntaxError(st)
				}
				if v, ok := exactNumber(it); ok {
					row = append(row, v)
					continue
				}
				v, handled, err := ss.localValue(it)
				if err != nil {
					return nil, err
				}
				if !handled {
					return nil, errf("the emulator inserts literal values only (numbers, strings, NULL); got: %s",
						st.text[it[0].start:it[len(it)-1].end])
				}
				row = append(row, v)
			}
			if len(row) != len(cols) {
				return nil, dorisError(mysql.ER_WRONG_VALUE_COUNT_ON_ROW, "Column count doesn't match value count")
			}
			rows = append(rows, row)
			k = end + 1
			if k < len(st.toks) {
				if !st.toks[k].isPunct(",") {
					return nil, syntaxError(st)
				}
				k++
			}
		}
	case st.at(n).is("SELECT") || st.at(n).is("WITH"):
		sel := stmt{text: st.text[st.toks[n].start:], toks: make([]token, len(st.toks)-n)}
		for i, tk := range st.toks[n:] {
			tk.start -= st.toks[n].start
			tk.end -= st.toks[n].start
			sel.toks[i] = tk
		}
		spec, err := ss.selectStmt(ctx, sel)
		if err != nil {
			return nil, err
		}
		if len(spec.names) != len(cols) {
			return nil, dorisError(mysql.ER_WRONG_VALUE_COUNT_ON_ROW, "Column count doesn't match value count")
		}
		rows = spec.rows
	default:
		return nil, syntaxError(st)
	}
	ss.mu.Lock()
	inTxn := ss.inTxn
	if inTxn {
		ss.pending = append(ss.pending, pendingInsert{db: db, table: name.table, columns: cols, rows: rows})
	}
	ss.mu.Unlock()
	if inTxn {
		return &mysql.Result{AffectedRows: uint64(len(rows))}, nil
	}
	res, err := ss.s.b.Insert(db, name.table, cols, rows)
	if err != nil {
		return nil, backendError(err)
	}
	return &mysql.Result{AffectedRows: uint64(res.Rows)}, nil
}

// txnControl handles BEGIN / START TRANSACTION, COMMIT and ROLLBACK. A
// transaction collects INSERTs and loads them at COMMIT as one Doris
// transaction; Doris allows one explicit transaction to write one table
// here (the emulator refuses INSERTs into several tables in one transaction
// rather than commit them apart).
func (ss *session) txnControl(st stmt) (*mysql.Result, error) {
	switch {
	case st.words("BEGIN"), st.words("START", "TRANSACTION"):
		ss.mu.Lock()
		ss.inTxn, ss.pending = true, nil
		ss.mu.Unlock()
		return nil, nil
	case st.words("ROLLBACK"):
		ss.mu.Lock()
		ss.inTxn, ss.pending = false, nil
		ss.mu.Unlock()
		return nil, nil
	case st.words("COMMIT"):
		ss.mu.Lock()
		pending := ss.pending
		ss.inTxn, ss.pending = false, nil
		ss.mu.Unlock()
		if len(pending) == 0 {
			return nil, nil
		}
		first := pending[0]
		var rows [][]any
		for _, p := range pending {
			if p.db != first.db || p.table != first.table || strings.Join(p.columns, ",") != strings.Join(first.columns, ",") {
				return nil, errf("the emulator commits a transaction's INSERTs into one table with one column list; this transaction wrote %s.%s and %s.%s: nothing was committed",
					first.db, first.table, p.db, p.table)
			}
			rows = append(rows, p.rows...)
		}
		if _, err := ss.s.b.Insert(first.db, first.table, first.columns, rows); err != nil {
			return nil, backendError(err)
		}
		return nil, nil
	}
	return nil, syntaxError(st)
}

// exactNumber returns a numeric literal (optionally negated) as its text,
// TRUE and FALSE as 1 and 0,
// a json.Number: Doris reads a literal such as 123456789012345678.91 as a
// DECIMAL and 2^127-1 as a LARGEINT, exactly; through float64 (as
// literalValue gives) they would lose digits before the column's type
// converts them.
func exactNumber(e []token) (json.Number, bool) {
	switch {
	case len(e) == 1 && e[0].kind == tokNumber:
		return json.Number(e[0].val), json.Valid([]byte(e[0].val))
	case len(e) == 2 && e[0].isPunct("-") && e[1].kind == tokNumber:
		return json.Number("-" + e[1].val), json.Valid([]byte("-" + e[1].val))
	case len(e) == 1 && e[0].kind == tokWord && (e[0].is("TRUE") || e[0].is("FALSE")):
		if e[0].is("TRUE") {
			return "1", true
		}
		return "0", true
	}
	return "", false
}
