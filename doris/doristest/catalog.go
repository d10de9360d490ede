package doristest

// Behavior: the catalog maps databases to tables. Each table's data lives in
// an internal/table.Table created from its schema.Table. Each database also
// owns its transactions (labels are per db, docs/doris-facts.md §4). Names are
// case-sensitive (Doris lower_case_table_names=0). Error texts follow the FE
// (MySQL ErrorCode) wording without the "errCode = N, detailMessage = "
// prefix, which the MySQL front adds.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/table"
	"github.com/doris-sink/doris-sink/doris/schema"
)

type database struct {
	id     int64
	name   string
	tables map[string]*tableEntry
	txns   *txnDB
}

// tableEntry is one table. id is its catalog identity, from the same
// counter as database ids: it never repeats (a table dropped and created
// again under the same name gets a new one) and survives ALTER TABLE.
// data.Schema() is the single source of the table's current columns, for
// DESC, SHOW CREATE TABLE, the FE _schema endpoint (Server.Schema),
// information_schema and Stream Load column matching; ALTER TABLE swaps it.
type tableEntry struct {
	id   int64
	data *table.Table
	// schemaVersion counts the table's schema changes (fe
	// MaterializedIndexMeta.schemaVersion, raised by every ALTER TABLE
	// COLUMN); partial-update txns compare it at commit (txn_schema.go).
	schemaVersion int64
}

// schema is the table's current schema (not to be modified).
func (te *tableEntry) schema() *schema.Table { return te.data.Schema() }

// tableByID returns d's table whose catalog id is id, or nil when that
// table was dropped (even if another table now has its name). A txn records
// the id at begin (txn.tableID); its commit path asks this to fail a txn
// whose table is gone. Callers hold s.mu.
func (d *database) tableByID(id int64) *tableEntry {
	for _, te := range d.tables {
		if te.id == id {
			return te
		}
	}
	return nil
}

// TableID returns the catalog identity of db.name (see tableEntry).
func (s *Server) TableID(db, name string) (int64, error) {
	t, err := s.table(db, name)
	if err != nil {
		return 0, fmt.Errorf("table id of %s.%s: %w", db, name, err)
	}
	return t.id, nil
}

// CreateDatabase creates an empty database. It fails when it exists.
func (s *Server) CreateDatabase(name string) error {
	return s.createDatabase(name, false)
}

func (s *Server) createDatabase(name string, ifNotExists bool) error {
	if name == "" {
		return fmt.Errorf("create database: empty name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dbs[name]; ok {
		if ifNotExists {
			return nil
		}
		return sqlErr(1007, "Can't create database '%s'; database exists", name)
	}
	s.nextID++
	s.dbs[name] = &database{id: s.nextID, name: name, tables: map[string]*tableEntry{}, txns: newTxnDB()}
	return nil
}

func (s *Server) dropDatabase(name string, ifExists bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dbs[name]; !ok {
		if ifExists {
			return nil
		}
		return sqlErr(1008, "Can't drop database '%s'; database doesn't exist", name)
	}
	delete(s.dbs, name)
	return nil
}

// CreateTable parses a CREATE TABLE statement (schema.ParseCreateTable) and
// creates the table in db. A database qualifier in the DDL overrides db.
func (s *Server) CreateTable(db, ddl string) error {
	t, err := schema.ParseCreateTable(ddl)
	if err != nil {
		return fmt.Errorf("create table in %s: %w", db, err)
	}
	return s.CreateTableSchema(db, t)
}

// CreateTableSchema creates a table from an already parsed schema.
func (s *Server) CreateTableSchema(db string, t *schema.Table) error {
	return s.createTable(db, t, false)
}

func (s *Server) createTable(db string, t *schema.Table, ifNotExists bool) error {
	if t.Database != "" {
		db = t.Database
	}
	data, err := table.New(t)
	if err != nil {
		return fmt.Errorf("create table %s.%s: %w", db, t.Name, err)
	}
	data.SetClock(s.clock.Now)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[db]
	if !ok {
		return errUnknownDatabase(db)
	}
	if _, ok := d.tables[t.Name]; ok {
		if ifNotExists {
			return nil
		}
		return sqlErr(1050, "Table '%s' already exists", t.Name)
	}
	s.nextID++
	d.tables[t.Name] = &tableEntry{id: s.nextID, data: data}
	return nil
}

func (s *Server) dropTable(db, name string, ifExists bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[db]
	if !ok {
		return errUnknownDatabase(db)
	}
	if _, ok := d.tables[name]; !ok {
		if ifExists {
			return nil
		}
		return sqlErr(1051, "Unknown table '%s'", name)
	}
	delete(d.tables, name)
	return nil
}

func (s *Server) truncateTable(db, name string) error {
	t, err := s.table(db, name)
	if err != nil {
		return err
	}
	t.data.Truncate()
	return nil
}

// deleteFrom is DELETE FROM db.name WHERE where (table.Table.DeleteWhere
// has Doris's rules); errors are DdlExceptions (1105, "errCode = 2").
func (s *Server) deleteFrom(db, name, where string) (int64, error) {
	t, err := s.table(db, name)
	if err != nil {
		return 0, err
	}
	n, err := t.data.DeleteWhere(where)
	if err != nil {
		var te *table.Error
		if errors.As(err, &te) {
			return 0, ddlErr("%s", te.Msg)
		}
		return 0, fmt.Errorf("delete from %s.%s: %w", db, name, err)
	}
	return n, nil
}

// Databases returns the database names, sorted.
func (s *Server) Databases() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.dbs))
	for n := range s.dbs {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Tables returns the table names of db, sorted.
func (s *Server) Tables(db string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[db]
	if !ok {
		return nil, errUnknownDatabase(db)
	}
	out := make([]string, 0, len(d.tables))
	for n := range d.tables {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// lookupTable returns a table entry. Callers hold s.mu.
func (s *Server) lookupTable(db, name string) (*tableEntry, error) {
	d, ok := s.dbs[db]
	if !ok {
		return nil, errUnknownDatabase(db)
	}
	t, ok := d.tables[name]
	if !ok {
		return nil, sqlErr(1051, "Unknown table '%s'", name)
	}
	return t, nil
}

func (s *Server) table(db, name string) (*tableEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupTable(db, name)
}

// Schema returns the schema of db.table.
func (s *Server) Schema(db, name string) (*schema.Table, error) {
	t, err := s.table(db, name)
	if err != nil {
		return nil, fmt.Errorf("schema of %s.%s: %w", db, name, err)
	}
	return t.schema(), nil
}

// Rows returns the visible rows of db.table in schema column order (values
// nil, int64, float64 or string), sorted by key columns.
func (s *Server) Rows(db, name string) ([][]any, error) {
	s.RunCleaner()
	t, err := s.table(db, name)
	if err != nil {
		return nil, fmt.Errorf("rows of %s.%s: %w", db, name, err)
	}
	return t.data.Rows(), nil
}

// SetCounting switches counting mode for db.table: loads are counted and
// discarded (for throughput benchmarks, docs/design.md §8).
func (s *Server) SetCounting(db, name string, on bool) error {
	t, err := s.table(db, name)
	if err != nil {
		return fmt.Errorf("set counting on %s.%s: %w", db, name, err)
	}
	t.data.SetCounting(on)
	return nil
}

// Counts returns the rows and bytes loaded into db.table in counting mode.
func (s *Server) Counts(db, name string) (rows, bytes int64, err error) {
	t, err := s.table(db, name)
	if err != nil {
		return 0, 0, fmt.Errorf("counts of %s.%s: %w", db, name, err)
	}
	rows, bytes = t.data.Counts()
	return rows, bytes, nil
}

// sqlError is a catalog error with its MySQL error code
// (mysqlfront.CodedError); Error() is Doris's message text.
type sqlError struct {
	code uint16
	msg  string
}

func (e *sqlError) Error() string { return e.msg }

// MySQLErrorCode implements mysqlfront.CodedError.
func (e *sqlError) MySQLErrorCode() uint16 { return e.code }

func sqlErr(code uint16, format string, args ...any) *sqlError {
	return &sqlError{code: code, msg: fmt.Sprintf(format, args...)}
}

// errUnknownDatabase is ERR_BAD_DB_ERROR (1049).
func errUnknownDatabase(db string) *sqlError { return sqlErr(1049, "Unknown database '%s'", db) }
