package mysqlfront

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// fakeBackend is an in-memory Backend for the tests.
type fakeBackend struct {
	mu      sync.Mutex
	users   map[string]string
	dbs     map[string]map[string]*fakeTable
	txns    map[string][]doris.Transaction // by db
	configs [][2]string
	nextID  int64
}

type fakeTable struct {
	t    *schema.Table
	id   int64
	rows [][]any
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{
		users: map[string]string{"root": ""},
		dbs:   map[string]map[string]*fakeTable{},
		txns:  map[string][]doris.Transaction{},
	}
}

func (f *fakeBackend) CheckPassword(user, password string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	pw, ok := f.users[user]
	return ok && pw == password
}

func (f *fakeBackend) CreateDatabase(name string, ifNotExists bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.dbs[name]; ok {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("Can't create database '%s'; database exists", name)
	}
	f.dbs[name] = map[string]*fakeTable{}
	return nil
}

func (f *fakeBackend) DropDatabase(name string, ifExists bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.dbs[name]; !ok {
		if ifExists {
			return nil
		}
		return fmt.Errorf("Can't drop database '%s'; database doesn't exist", name)
	}
	delete(f.dbs, name)
	return nil
}

func (f *fakeBackend) Databases() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.dbs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (f *fakeBackend) CreateTable(db string, t *schema.Table, ifNotExists bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Database != "" {
		db = t.Database
	}
	tables, ok := f.dbs[db]
	if !ok {
		return fmt.Errorf("Unknown database '%s'", db)
	}
	if _, ok := tables[t.Name]; ok {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("Table '%s' already exists", t.Name)
	}
	f.nextID++
	tables[t.Name] = &fakeTable{t: t, id: f.nextID}
	return nil
}

func (f *fakeBackend) DropTable(db, table string, ifExists bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	tables := f.dbs[db]
	if _, ok := tables[table]; !ok {
		if ifExists {
			return nil
		}
		return fmt.Errorf("Unknown table '%s'", table)
	}
	delete(tables, table)
	return nil
}

func (f *fakeBackend) TruncateTable(db, table string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.table(db, table)
	if err != nil {
		return err
	}
	t.rows = nil
	return nil
}

func (f *fakeBackend) DeleteFrom(db, table, where string) (int64, error) {
	return 0, fmt.Errorf("DeleteFrom is not faked")
}

func (f *fakeBackend) AlterTable(db, table string, ops []AlterOp) error {
	return fmt.Errorf("AlterTable is not faked")
}

func (f *fakeBackend) Tables(db string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tables, ok := f.dbs[db]
	if !ok {
		return nil, fmt.Errorf("Unknown database '%s'", db)
	}
	var out []string
	for n := range tables {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (f *fakeBackend) table(db, table string) (*fakeTable, error) {
	t, ok := f.dbs[db][table]
	if !ok {
		return nil, fmt.Errorf("Unknown table '%s'", table)
	}
	return t, nil
}

func (f *fakeBackend) Table(db, table string) (*schema.Table, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.table(db, table)
	if err != nil {
		return nil, err
	}
	return t.t, nil
}

func (f *fakeBackend) QueryTables() []sqlexec.Table {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sqlexec.Table
	for db, tables := range f.dbs {
		for n, t := range tables {
			rows := slices.Clone(t.rows)
			out = append(out, sqlexec.Table{DB: db, Name: n, ID: t.id, Schema: t.t,
				Snapshot: func() (sqlexec.Rows, error) { return sqlexec.SliceRows(rows), nil }})
		}
	}
	return out
}

// setRows replaces a table's visible rows (test helper).
func (f *fakeBackend) setRows(db, table string, rows [][]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.table(db, table)
	if err != nil {
		return err
	}
	t.rows = rows
	return nil
}

func (f *fakeBackend) Transactions(db string, q TxnQuery) ([]doris.Transaction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.dbs[db]; !ok {
		return nil, errors.New("Unknown database '" + db + "'")
	}
	var out []doris.Transaction
	for _, t := range f.txns[db] {
		switch {
		case q.ID > 0 && t.ID == q.ID,
			q.Label != "" && t.Label == q.Label,
			q.LabelLike != "" && likeMatch(q.LabelLike, t.Label),
			q.Status != "" && t.Status == q.Status:
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeBackend) FrontendConfig(pattern string) [][2]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][2]string
	for _, kv := range f.configs {
		if pattern == "" || likeMatch(pattern, kv[0]) {
			out = append(out, kv)
		}
	}
	return out
}

// pwBackend adds PasswordLookup so that mysql_native_password works with
// non-empty passwords.
type pwBackend struct{ *fakeBackend }

func (p pwBackend) Password(user string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pw, ok := p.users[user]
	return pw, ok
}

// Insert appends the rows (the fake has no table models; the emulator's
// Backend is tested in package doristest).
func (f *fakeBackend) Insert(db, table string, columns []string, rows [][]any) (InsertResult, error) {
	return InsertResult{Label: "insert_fake", Rows: int64(len(rows)), Status: "VISIBLE"}, nil
}
