package loader

import "github.com/doris-sink/doris-sink/loader/ledger"

// RecordTableChange appends a ledger entry for a change the sink made to
// its table: kind is ledger.EventTableCreated or ledger.EventSchemaChanged,
// ddl the statement Doris ran. The entry names the job, db and table, with
// checkpoint 0 (it belongs to no checkpoint: the change is made before the
// load that needs it begins). Like all evidence, a failed append is logged,
// never fatal. Safe for concurrent use.
func (l *Loader) RecordTableChange(kind, ddl string) {
	if l.ledger == nil {
		return
	}
	e := ledger.Entry{Time: l.clock.Now(), Event: kind, Job: l.cfg.Job, DB: l.cfg.DB, Table: l.cfg.Table, Note: ddl}
	if err := l.ledger.Append(e); err != nil {
		l.log.Warn("ledger append failed", "event", kind, "table", l.cfg.DB+"."+l.cfg.Table, "err", err)
	}
}
