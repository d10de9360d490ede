package mysqlfront

import (
	"github.com/doris-sink/doris-sink/doris/schema"
)

// alter handles ALTER TABLE [db.]t clause [, clause]… where a clause is
//
//	ADD COLUMN col_def [FIRST | AFTER c]
//	ADD COLUMN (col_def, …)
//	DROP COLUMN c
//	MODIFY COLUMN col_def [FIRST | AFTER c]
//
// (Doris's ALTER TABLE COLUMN syntax, doris-website ALTER-TABLE-COLUMN.md;
// rollup targets, PROPERTIES and other ALTER forms are not emulated). The
// Backend checks and applies the clauses all or none.
func (ss *session) alter(st stmt) (*resultSpec, error) {
	if !st.words("ALTER", "TABLE") {
		return nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, 2)
	if name.table == "" || n >= len(st.toks) {
		return nil, syntaxError(st)
	}
	var ops []AlterOp
	for _, cl := range splitTop(st.toks[n:]) {
		more, err := ss.alterClause(st, cl)
		if err != nil {
			return nil, err
		}
		ops = append(ops, more...)
	}
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return nil, err
	}
	if err := ss.s.b.AlterTable(db, name.table, ops); err != nil {
		return nil, backendError(err)
	}
	return nil, nil
}

func (ss *session) alterClause(st stmt, cl []token) ([]AlterOp, error) {
	at := func(i int) token {
		if i < len(cl) {
			return cl[i]
		}
		return token{kind: tokPunct}
	}
	unsupported := func() error {
		return errf("Unsupported ALTER TABLE clause in the Doris emulator (ADD / DROP / MODIFY COLUMN are emulated): %s", clauseText(st, cl))
	}
	switch {
	case at(0).is("DROP") && at(1).is("COLUMN"):
		if at(2).name() == "" || len(cl) != 3 {
			return nil, unsupported()
		}
		return []AlterOp{{Kind: AlterDropColumn, Column: schema.Column{Name: at(2).name()}}}, nil
	case at(0).is("ADD") && at(1).is("COLUMN") && at(2).isPunct("("):
		if !at(len(cl) - 1).isPunct(")") {
			return nil, unsupported()
		}
		var ops []AlterOp
		for _, def := range splitTop(cl[3 : len(cl)-1]) {
			op, err := columnOp(st, AlterAddColumn, def)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
		return ops, nil
	case at(0).is("ADD") && at(1).is("COLUMN"):
		op, err := columnOp(st, AlterAddColumn, cl[2:])
		return []AlterOp{op}, err
	case at(0).is("MODIFY") && at(1).is("COLUMN"):
		op, err := columnOp(st, AlterModifyColumn, cl[2:])
		return []AlterOp{op}, err
	}
	return nil, unsupported()
}

func clauseText(st stmt, cl []token) string {
	if len(cl) == 0 {
		return ""
	}
	return st.text[cl[0].start:cl[len(cl)-1].end]
}

// columnOp reads `col_def [FIRST | AFTER c]`; the definition is parsed by
// the CREATE TABLE column parser (doris/schema).
func columnOp(st stmt, kind AlterKind, def []token) (AlterOp, error) {
	op := AlterOp{Kind: kind}
	switch n := len(def); {
	case n >= 2 && def[n-2].is("AFTER") && def[n-1].name() != "":
		op.After, def = def[n-1].name(), def[:n-2]
	case n >= 1 && def[n-1].is("FIRST"):
		op.First, def = true, def[:n-1]
	}
	if len(def) < 2 {
		return op, errf("Unsupported column definition in ALTER TABLE: %s", clauseText(st, def))
	}
	for _, t := range def {
		if t.is("KEY") {
			op.Key = true
		}
	}
	t, err := schema.ParseCreateTable("CREATE TABLE t (" + clauseText(st, def) + ")")
	if err != nil || len(t.Columns) != 1 {
		return op, errf("Unsupported column definition in ALTER TABLE: %s (%v)", clauseText(st, def), err)
	}
	op.Column = t.Columns[0]
	return op, nil
}
