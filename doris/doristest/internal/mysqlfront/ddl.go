package mysqlfront

import (
	"github.com/doris-sink/doris-sink/doris/schema"
)

// create handles CREATE DATABASE|SCHEMA [IF NOT EXISTS] db and CREATE TABLE.
func (ss *session) create(st stmt) (*resultSpec, error) {
	switch {
	case st.words("CREATE", "DATABASE"), st.words("CREATE", "SCHEMA"):
		i, ifNotExists := 2, false
		if st.at(2).is("IF") && st.at(3).is("NOT") && st.at(4).is("EXISTS") {
			i, ifNotExists = 5, true
		}
		name := st.at(i).name()
		if name == "" {
			return nil, syntaxError(st)
		}
		// Trailing PROPERTIES (...) are accepted and ignored.
		if err := ss.s.b.CreateDatabase(name, ifNotExists); err != nil {
			return nil, backendError(err)
		}
		return nil, nil
	case st.words("CREATE", "TABLE"), st.words("CREATE", "EXTERNAL", "TABLE"):
		t, err := schema.ParseCreateTable(st.text)
		if err != nil {
			return nil, backendError(err)
		}
		ifNotExists := st.at(2).is("IF") && st.at(3).is("NOT") && st.at(4).is("EXISTS")
		db, err := ss.resolveDB(t.Database)
		if err != nil {
			return nil, err
		}
		if err := ss.knownDB(db); err != nil {
			return nil, err
		}
		if err := ss.s.b.CreateTable(db, t, ifNotExists); err != nil {
			return nil, backendError(err)
		}
		return nil, nil
	}
	return nil, syntaxError(st)
}

// drop handles DROP DATABASE|SCHEMA [IF EXISTS] db [FORCE] and
// DROP TABLE [IF EXISTS] [db.]t [FORCE].
func (ss *session) drop(st stmt) (*resultSpec, error) {
	isDB := st.words("DROP", "DATABASE") || st.words("DROP", "SCHEMA")
	if !isDB && !st.words("DROP", "TABLE") {
		return nil, syntaxError(st)
	}
	i, ifExists := 2, false
	if st.at(2).is("IF") && st.at(3).is("EXISTS") {
		i, ifExists = 4, true
	}
	name, n := qualifiedName(st.toks, i)
	if name.table == "" {
		return nil, syntaxError(st)
	}
	if n < len(st.toks) && st.at(n).is("FORCE") {
		n++
	}
	if n != len(st.toks) {
		return nil, syntaxError(st)
	}
	if isDB {
		if name.db != "" {
			return nil, syntaxError(st)
		}
		if err := ss.s.b.DropDatabase(name.table, ifExists); err != nil {
			return nil, backendError(err)
		}
		return nil, nil
	}
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return nil, err
	}
	if err := ss.s.b.DropTable(db, name.table, ifExists); err != nil {
		return nil, backendError(err)
	}
	return nil, nil
}

// truncate handles TRUNCATE TABLE [db.]t [FORCE]: every row goes, the
// table stays (fe TruncateTableCommand; partitions are not emulated).
func (ss *session) truncate(st stmt) (*resultSpec, error) {
	if !st.words("TRUNCATE", "TABLE") {
		return nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, 2)
	if n < len(st.toks) && st.at(n).is("FORCE") {
		n++
	}
	if name.table == "" || n != len(st.toks) {
		return nil, syntaxError(st)
	}
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return nil, err
	}
	if err := ss.s.b.TruncateTable(db, name.table); err != nil {
		return nil, backendError(err)
	}
	return nil, nil
}
