package mysqlfront

// deleteFrom handles DELETE FROM [db.]t [[AS] alias] WHERE condition (Doris's
// DELETE, doris-website data-operate/delete/delete-manual.md). PARTITION
// and USING clauses are not emulated. The Backend applies Doris's predicate
// rules per table model.
func (ss *session) deleteFrom(st stmt) (*resultSpec, error) {
	if !st.words("DELETE", "FROM") {
		return nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, 2)
	if name.table == "" {
		return nil, syntaxError(st)
	}
	if st.at(n).is("AS") {
		n += 2
	} else if t := st.at(n); t.name() != "" && !t.is("WHERE") && !t.is("PARTITION") && !t.is("PARTITIONS") && !t.is("USING") {
		n++
	}
	switch {
	case st.at(n).is("PARTITION"), st.at(n).is("PARTITIONS"), st.at(n).is("USING"):
		return nil, errf("DELETE … %s is not emulated by the Doris emulator", st.at(n).val)
	case n == len(st.toks):
		return nil, errf("delete command must contain filter")
	case !st.at(n).is("WHERE") || n+1 >= len(st.toks):
		return nil, syntaxError(st)
	}
	where := st.text[st.toks[n+1].start:st.toks[len(st.toks)-1].end]
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return nil, err
	}
	if _, err := ss.s.b.DeleteFrom(db, name.table, where); err != nil {
		return nil, backendError(err)
	}
	return nil, nil
}
