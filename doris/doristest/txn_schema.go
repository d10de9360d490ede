package doristest

// Behavior: the commit-time schema check of partial-update loads (apache/doris
// fe .../transaction/DatabaseTransactionMgr.java checkTransactionStateBeforeCommit
// and TransactionState.java setSchemaForPartialUpdate / checkSchemaCompatibility):
//   - A partial-update load (partial_columns: true; in Doris also
//     unique_key_update_mode UPDATE_FIXED_COLUMNS / UPDATE_FLEXIBLE_COLUMNS)
//     records the table's schema and schema version when it is planned
//     (StreamLoadHandler / NereidsStreamLoadPlanner, at begin). Other loads
//     record nothing and are never checked.
//   - At commit (2PC commit of a PRECOMMITTED txn, or the commit of a non-2PC
//     load), when the table's schema version grew since, every visible string
//     column (CHAR, VARCHAR, STRING) of the recorded schema whose current
//     column (same unique id; here: same name) is a string of another length
//     fails the commit: "transaction [<id>] check schema compatibility failed,
//     partial update can't commit with old schema sucessfully ." (Doris's
//     spelling). An added or dropped column alone passes.
//   - The failure is a TransactionCommitFailedException (ANALYSIS_ERROR): a
//     2PC txn stays PRECOMMITTED (it can still be aborted; it times out
//     otherwise); a non-2PC load is rolled back by its BE.

import "strings"

// planPartialLocked records t's table schema for a partial-update load.
func (s *Server) planPartialLocked(t *txn) {
	te := t.db.tableByID(t.tableID)
	if te == nil {
		return
	}
	t.partialSchema, t.partialVersion = te.schema(), te.schemaVersion
}

// checkSchemaCompatibilityLocked is TransactionState.checkSchemaCompatibility
// as checkTransactionStateBeforeCommit applies it.
func (s *Server) checkSchemaCompatibilityLocked(t *txn) *feError {
	if t.partialSchema == nil {
		return nil
	}
	te := t.db.tableByID(t.tableID)
	if te == nil || t.partialVersion >= te.schemaVersion {
		return nil
	}
	cur := te.schema()
	for _, old := range t.partialSchema.Columns {
		if strings.HasPrefix(strings.ToUpper(old.Name), "__DORIS_") || !isStringType(old.Type) {
			continue // hidden columns are not visible
		}
		now, _, ok := cur.Column(old.Name)
		if ok && isStringType(now.Type) && strLen(now.Type) != strLen(old.Type) {
			return analysisErr("transaction [%d] check schema compatibility failed, partial update can't commit with old schema sucessfully .", t.id)
		}
	}
	return nil
}

func isStringType(typ string) bool {
	switch parseDorisType(typ).base {
	case "CHAR", "VARCHAR", "STRING":
		return true
	}
	return false
}

// strLen is fe ScalarType.getLength of a string type: n of CHAR(n) /
// VARCHAR(n) (CHAR 1 and VARCHAR 65533 without n), STRING's fixed maximum.
func strLen(typ string) int {
	t := parseDorisType(typ)
	switch t.base {
	case "CHAR":
		return t.arg(0, 1)
	case "VARCHAR":
		return t.arg(0, 65533)
	}
	return 2147483643 // ScalarType.MAX_STRING_LENGTH
}
