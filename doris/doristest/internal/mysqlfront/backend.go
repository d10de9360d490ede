// Package mysqlfront serves the Doris FE MySQL protocol for the emulator: the
// DDL, SHOW and SELECT statements a user or the doris client sends to port
// 9030. It knows nothing about transactions or storage; it asks a Backend.
package mysqlfront

import (
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// Backend is the emulator state the MySQL front reads and changes. Errors
// carry Doris's message text (without the "errCode = N, detailMessage = "
// prefix, which the front adds).
type Backend interface {
	// CheckPassword reports whether user/password may log in.
	CheckPassword(user, password string) bool
	CreateDatabase(name string, ifNotExists bool) error
	DropDatabase(name string, ifExists bool) error
	Databases() []string
	// CreateTable creates t in db (t.Database, when set, overrides db).
	CreateTable(db string, t *schema.Table, ifNotExists bool) error
	DropTable(db, table string, ifExists bool) error
	// TruncateTable removes every row of db.table (TRUNCATE TABLE).
	TruncateTable(db, table string) error
	// DeleteFrom removes the rows of db.table matching where (the text of
	// a DELETE's WHERE clause) and returns how many went.
	DeleteFrom(db, table, where string) (int64, error)
	// AlterTable applies the clauses of one ALTER TABLE … ADD / DROP /
	// MODIFY COLUMN statement, all or none.
	AlterTable(db, table string, ops []AlterOp) error
	// Insert loads rows (values nil, int64, float64 or string, in the order
	// of columns) into db.table as one transaction through the table's
	// model, as INSERT INTO does.
	Insert(db, table string, columns []string, rows [][]any) (InsertResult, error)
	Tables(db string) ([]string, error)
	Table(db, table string) (*schema.Table, error)
	// QueryTables lists every table of every database for the SQL engine.
	// It must be cheap: no row is read until a query reads the table
	// (sqlexec.Table.Snapshot).
	QueryTables() []sqlexec.Table
	// Transactions answers SHOW TRANSACTION for db: exactly one of ID,
	// Label, LabelLike or Status is set in q.
	Transactions(db string, q TxnQuery) ([]doris.Transaction, error)
	// FrontendConfig answers ADMIN SHOW FRONTEND CONFIG [LIKE pattern]:
	// pairs of key and value (pattern uses SQL LIKE wildcards; empty = all).
	FrontendConfig(pattern string) [][2]string
}

// TxnQuery is the WHERE clause of SHOW TRANSACTION (docs/doris-facts.md §6.2).
type TxnQuery struct {
	ID        int64 // > 0 when set
	Label     string
	LabelLike string
	Status    doris.TxnStatus
}

// AlterKind is the kind of one ALTER TABLE clause.
type AlterKind int

// ALTER TABLE clause kinds.
const (
	AlterAddColumn AlterKind = iota + 1
	AlterDropColumn
	AlterModifyColumn
)

// AlterOp is one clause of ALTER TABLE: ADD COLUMN, DROP COLUMN or MODIFY
// COLUMN.
type AlterOp struct {
	Kind AlterKind
	// Column is the column as declared (ADD, MODIFY); for DROP only its
	// Name is set.
	Column schema.Column
	// Key is set when the definition carries the KEY keyword.
	Key bool
	// After names the column to place it after; First places it first;
	// neither: Doris's default place (ADD: after the last key column for a
	// key, else after the last visible column; MODIFY: where it is).
	After string
	First bool
}
