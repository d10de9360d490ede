package doristest

// Behavior: mysqlBackend adapts the Server to internal/mysqlfront.Backend,
// which serves the FE MySQL protocol (DDL, SHOW, SELECT via internal/sqlexec).
//   - SHOW TRANSACTION (docs/doris-facts.md §6.2): WHERE label = 'x' → the label's
//     latest txn, none → "transaction with label x does not exist";
//     WHERE id = N unknown → "transaction with id N does not exist";
//     label LIKE / status → every matching txn, newest first. Fault op
//     show_txn fires here.
//   - ADMIN SHOW FRONTEND CONFIG answers from the FE config (fe_config.go).
//   - Every call runs the cleaner first (cleaner.go).

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
	"github.com/doris-sink/doris-sink/doris/schema"
)

type mysqlBackend struct{ s *Server }

var (
	_ mysqlfront.Backend        = mysqlBackend{}
	_ mysqlfront.PasswordLookup = mysqlBackend{}
)

func (s *Server) startMySQL(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("doristest: listen mysql on %s: %w", addr, err)
	}
	s.mysqlAddr = exposedAddr(addr, ln.Addr().String())
	s.mysql = mysqlfront.New(mysqlBackend{s}, mysqlfront.WithLogger(s.log), mysqlfront.WithQueryTimeout(s.cfg.queryTimeout))
	go func() {
		if err := s.mysql.Serve(ln); err != nil {
			s.log.Warn("doristest: mysql serve", "err", err)
		}
	}()
	return nil
}

func (b mysqlBackend) CheckPassword(user, password string) bool {
	pw, ok := b.s.users[user]
	return ok && pw == password
}

func (b mysqlBackend) Password(user string) (string, bool) {
	pw, ok := b.s.users[user]
	return pw, ok
}

func (b mysqlBackend) CreateDatabase(name string, ifNotExists bool) error {
	return b.s.createDatabase(name, ifNotExists)
}

func (b mysqlBackend) DropDatabase(name string, ifExists bool) error {
	return b.s.dropDatabase(name, ifExists)
}

func (b mysqlBackend) Databases() []string { return b.s.Databases() }

func (b mysqlBackend) CreateTable(db string, t *schema.Table, ifNotExists bool) error {
	return b.s.createTable(db, t, ifNotExists)
}

func (b mysqlBackend) DropTable(db, table string, ifExists bool) error {
	return b.s.dropTable(db, table, ifExists)
}

func (b mysqlBackend) TruncateTable(db, table string) error { return b.s.truncateTable(db, table) }

func (b mysqlBackend) DeleteFrom(db, table, where string) (int64, error) {
	return b.s.deleteFrom(db, table, where)
}

func (b mysqlBackend) AlterTable(db, table string, ops []mysqlfront.AlterOp) error {
	return b.s.alterTable(db, table, ops)
}

func (b mysqlBackend) Tables(db string) ([]string, error) { return b.s.Tables(db) }

func (b mysqlBackend) Table(db, table string) (*schema.Table, error) {
	t, err := b.s.table(db, table)
	if err != nil {
		return nil, err
	}
	return t.schema(), nil
}

func (b mysqlBackend) QueryTables() []sqlexec.Table {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	var out []sqlexec.Table
	for _, d := range s.dbs {
		for _, te := range d.tables {
			data, sch, db := te.data, te.schema(), d.name
			out = append(out, sqlexec.Table{DB: db, Name: sch.Name, ID: te.id, Schema: sch,
				Snapshot: func() (sqlexec.Rows, error) {
					snap := data.Snapshot()
					if snap.Schema() != sch {
						return nil, &sqlexec.Error{Code: 1105, Message: fmt.Sprintf(
							"table [%s.%s] was altered after the query started; run it again", db, sch.Name)}
					}
					return snap, nil
				}})
		}
	}
	return out
}

func (b mysqlBackend) Transactions(db string, q mysqlfront.TxnQuery) ([]doris.Transaction, error) {
	label := q.Label
	if act := b.s.fault(context.Background(), FaultShowTxn, db, "", label); act != nil {
		if act.err != nil {
			return nil, fmt.Errorf("%s", act.err.Message)
		}
		return nil, fmt.Errorf("Lost connection to the FE (injected fault)")
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanLocked()
	d, ok := s.dbs[db]
	if !ok {
		return nil, errUnknownDatabase(db)
	}
	switch {
	case q.ID > 0:
		t, ok := d.txns.byID[q.ID]
		if !ok {
			return nil, fmt.Errorf("transaction with id %d does not exist", q.ID)
		}
		return []doris.Transaction{t.snapshot()}, nil
	case q.Label != "":
		t := d.txns.latest(q.Label)
		if t == nil {
			return nil, fmt.Errorf("transaction with label %s does not exist", q.Label)
		}
		return []doris.Transaction{t.snapshot()}, nil
	case q.LabelLike != "":
		// Doris turns only % into .* and matches the whole label as a
		// case-sensitive (Java) regex: _ is a literal, . any character
		// (ShowTransactionCommand, DatabaseTransactionMgr.getTxnStateInfoList).
		re, err := regexp.Compile("^(?:" + strings.ReplaceAll(q.LabelLike, "%", ".*") + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid label pattern %q: %v", q.LabelLike, err)
		}
		out := snapshots(d, func(t *txn) bool { return re.MatchString(t.label) })
		slices.Reverse(out)
		return out, nil
	case q.Status != "":
		st := doris.TxnStatus(strings.ToUpper(string(q.Status)))
		out := snapshots(d, func(t *txn) bool { return t.status == st })
		slices.Reverse(out)
		return out, nil
	}
	return nil, fmt.Errorf("Missing transaction id")
}

func (b mysqlBackend) FrontendConfig(pattern string) [][2]string {
	return b.s.frontendConfig(pattern)
}
