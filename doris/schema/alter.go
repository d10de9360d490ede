package schema

import "strings"

// CreateTableIfNotExistsSQL is CreateTableSQL with IF NOT EXISTS: Doris
// then answers success without a change when the table exists (fe
// InternalCatalog.createTable: "table already exists" is ignored with IF NOT
// EXISTS), so the statement is safe to repeat.
func (t *Table) CreateTableIfNotExistsSQL() string {
	return "CREATE TABLE IF NOT EXISTS " + strings.TrimPrefix(t.CreateTableSQL(), "CREATE TABLE ")
}

// ColumnSQL renders one column definition as SHOW CREATE TABLE prints it
// (`name` type [NULL|NOT NULL] [DEFAULT …] [COMMENT '…']), the form ALTER
// TABLE … ADD/MODIFY COLUMN takes.
func ColumnSQL(c Column) string { return columnSQL(c) }

// AlterColumnsSQL returns one ALTER TABLE `db`.`table` statement that adds
// the columns add (after the last column) and modifies the columns modify,
// or "" when both are empty. Doris applies its clauses together: with
// light_schema_change on, adding value columns and lengthening a VARCHAR
// are metadata-only changes done before the statement returns.
func AlterColumnsSQL(db, table string, add, modify []Column) string {
	if len(add) == 0 && len(modify) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("ALTER TABLE ")
	if db != "" {
		b.WriteString(quoteIdent(db) + ".")
	}
	b.WriteString(quoteIdent(table) + " ")
	n := 0
	for _, c := range add {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString("ADD COLUMN " + columnSQL(c))
		n++
	}
	for _, c := range modify {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString("MODIFY COLUMN " + columnSQL(c))
		n++
	}
	return b.String()
}
