package loader

import "github.com/doris-sink/doris-sink/loader/ledger"

// RecordTableChange appends a ledger entry for a change the sink made to
// its table: kind is ledger.EventTableCreated or ledger.EventSchemaChanged,
// ddl the statement Doris ran. The entry names the job, db and table, with
// checkpoint 0 (it belongs to no checkpoint: the change is made before the
// load that needs it begins). Like all evidence, a failed append is logged,
// never fatal. Safe for concurrent use.
func (l *Loader) RecordTableChange(kind, ddl string) {
	l.RecordTableChangeOf(l.cfg.Table, kind, ddl)
}

// RecordTableChangeOf is RecordTableChange for table, a routed table
// ("db.table" or a table of Config.DB): the entry names that table.
func (l *Loader) RecordTableChangeOf(table, kind, ddl string) {
	if l.ledger == nil && l.cfg.Evidence == nil {
		return
	}
	db, tbl := l.cfg.DB, table
	if d, t, ok := splitQualified(table); ok {
		db, tbl = d, t
	}
	e := ledger.Entry{Time: l.clock.Now(), Event: kind, Job: l.cfg.Job, DB: db, Table: tbl, Note: ddl}
	l.stageEvidence(e)
	if l.ledger == nil {
		return
	}
	if err := l.ledger.Append(e); err != nil {
		l.log.Warn("ledger append failed", "event", kind, "table", db+"."+tbl, "err", err)
	}
}

// splitQualified splits "db.table"; ok is false for a bare name.
func splitQualified(table string) (db, tbl string, ok bool) {
	for i := 0; i < len(table); i++ {
		if table[i] == '.' {
			return table[:i], table[i+1:], i > 0 && i < len(table)-1
		}
	}
	return "", table, false
}
