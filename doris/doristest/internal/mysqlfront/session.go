package mysqlfront

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// session is the state of one connection and its go-mysql Handler. go-mysql
// calls a Handler from the connection's goroutine only; mu guards the fields
// the server goroutine sets after the handshake.
type session struct {
	s *Server

	mu        sync.Mutex
	connID    uint32 // go-mysql's connection id, as sent in the handshake
	loginTime time.Time
	db        string
	user      string
	host      string
	vars      map[string]any // session variables changed with SET
	uvars     map[string]any // user variables (SET @a = 5), by lower-case name

	inTxn   bool            // after BEGIN, until COMMIT or ROLLBACK
	pending []pendingInsert // INSERTs of the open transaction
}

func newSession(s *Server) *session {
	return &session{s: s, vars: make(map[string]any), uvars: make(map[string]any)}
}

// userVar returns user variable @name: NULL (nil) when it was never set, as
// MySQL and Doris answer. Names are case-insensitive.
func (ss *session) userVar(name string) any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.uvars[strings.ToLower(name)]
}

func (ss *session) currentDB() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.db
}

// UseDB handles COM_INIT_DB and `USE db`.
func (ss *session) UseDB(db string) error {
	if db == "" {
		return errNoDB()
	}
	if !slices.Contains(ss.databases(), db) {
		return errUnknownDB(db)
	}
	ss.mu.Lock()
	ss.db = db
	ss.mu.Unlock()
	return nil
}

// HandleQuery handles COM_QUERY.
func (ss *session) HandleQuery(q string) (*mysql.Result, error) {
	ctx, cancel := ss.statementContext()
	defer cancel()
	r, err := ss.query(ctx, q, false)
	return r, timeoutError(ctx, err)
}

// HandleFieldList handles COM_FIELD_LIST (the mysql CLI's auto-rehash).
func (ss *session) HandleFieldList(table, _ string) ([]*mysql.Field, error) {
	db := ss.currentDB()
	if db == "" {
		return nil, errNoDB()
	}
	t, err := ss.s.b.Table(db, table)
	if err != nil {
		return nil, backendError(err)
	}
	var fs []*mysql.Field
	for _, c := range t.Columns {
		if isHiddenColumn(c.Name) {
			continue
		}
		fs = append(fs, &mysql.Field{Schema: []byte(db), Table: []byte(table), OrgTable: []byte(table),
			Name: []byte(c.Name), OrgName: []byte(c.Name), Charset: 33, Type: mysql.MYSQL_TYPE_VAR_STRING})
	}
	return fs, nil
}

// HandleOtherCommand handles commands go-mysql does not: COM_SET_OPTION is
// accepted; anything else is refused.
func (ss *session) HandleOtherCommand(cmd byte, _ []byte) error {
	if cmd == mysql.COM_SET_OPTION {
		return nil
	}
	return mysql.NewError(mysql.ER_UNKNOWN_COM_ERROR, "Unknown command")
}

// query parses one statement and answers it; binary selects the row
// protocol (prepared statements).
func (ss *session) query(ctx context.Context, q string, binary bool) (*mysql.Result, error) {
	text, toks := trimStatement(q)
	if len(toks) == 0 {
		return nil, mysql.NewError(mysql.ER_EMPTY_QUERY, "Query was empty")
	}
	st := stmt{text: text, toks: toks}
	switch {
	case st.at(0).is("INSERT"):
		return ss.insert(ctx, st)
	case st.at(0).is("BEGIN"), st.at(0).is("COMMIT"), st.at(0).is("ROLLBACK"), st.words("START", "TRANSACTION"):
		return ss.txnControl(st)
	}
	spec, err := ss.dispatch(ctx, st)
	if err != nil {
		return nil, err
	}
	if spec == nil {
		return nil, nil // OK packet
	}
	r, err := spec.build(binary)
	if err != nil {
		return nil, errf("%s", err.Error())
	}
	return r, nil
}

// stmt is one statement: its text (comments kept, trailing `;` dropped) and
// its tokens (comments dropped).
type stmt struct {
	text string
	toks []token
}

// at returns token i, or a zero token past the end.
func (st stmt) at(i int) token {
	if i < len(st.toks) {
		return st.toks[i]
	}
	return token{kind: tokPunct, val: ""}
}

// words reports whether the statement starts with the given words.
func (st stmt) words(ws ...string) bool {
	for i, w := range ws {
		if !st.at(i).is(w) {
			return false
		}
	}
	return true
}

// dispatch routes a statement to its handler. A nil spec means "send OK".
func (ss *session) dispatch(ctx context.Context, st stmt) (*resultSpec, error) {
	first := strings.ToUpper(st.at(0).val)
	if st.at(0).kind != tokWord {
		first = ""
	}
	switch first {
	case "USE":
		db, n := qualifiedName(st.toks, 1)
		if db.table == "" || n != len(st.toks) {
			return nil, syntaxError(st)
		}
		return nil, ss.UseDB(db.table)
	case "CREATE":
		return ss.create(st)
	case "DROP":
		return ss.drop(st)
	case "TRUNCATE":
		return ss.truncate(st)
	case "ALTER":
		return ss.alter(st)
	case "DELETE":
		return ss.deleteFrom(st)
	case "SHOW":
		return ss.show(st)
	case "DESC", "DESCRIBE":
		return ss.describe(st, 1)
	case "ADMIN":
		if st.words("ADMIN", "SHOW", "FRONTEND", "CONFIG") {
			return ss.frontendConfig(st, 4)
		}
	case "SELECT", "WITH":
		return ss.selectStmt(ctx, st)
	case "EXPLAIN":
		return nil, errf("EXPLAIN is not emulated: the Doris emulator evaluates queries with SQLite and has no Doris plan to show")
	case "SET":
		return nil, ss.set(st)
	}
	return nil, syntaxError(st)
}

// syntaxError is the answer to a statement the emulator cannot parse. A
// statement that does not start with a word Doris's grammar starts
// statements with gets Doris's parser answer (fe nereids ParseException:
// "\n<ANTLR message>(line L, pos P)\n" after the errCode prefix); one that
// does (SHOW …, ALTER …) may be valid Doris the emulator lacks, so the
// answer says that and quotes the statement.
func syntaxError(st stmt) error {
	if t := st.at(0); t.kind != tokWord || !dorisStatementWords[strings.ToUpper(t.val)] {
		line, pos := 1, t.start
		if nl := strings.LastIndexByte(st.text[:t.start], '\n'); nl >= 0 {
			line, pos = 1+strings.Count(st.text[:t.start], "\n"), t.start-nl-1
		}
		return errf("\nmismatched input '%s' expecting {'(', 'ADMIN', 'ALTER', 'BEGIN', 'COMMIT', 'CREATE', 'DELETE', 'DESC', 'DROP', 'EXPLAIN', 'INSERT', 'ROLLBACK', 'SELECT', 'SET', 'SHOW', 'TRUNCATE', 'UPDATE', 'USE', 'WITH'}(line %d, pos %d)\n",
			st.text[t.start:t.end], line, pos)
	}
	q := st.text
	if len(q) > 200 {
		q = q[:200] + "..."
	}
	return errf("the Doris emulator does not support this statement, or it is malformed: %s", q)
}

// dorisStatementWords are words Doris statements start with.
var dorisStatementWords = map[string]bool{
	"ADMIN": true, "ALTER": true, "ANALYZE": true, "BACKUP": true, "BEGIN": true, "CALL": true, "CANCEL": true,
	"CLEAN": true, "COMMIT": true, "COPY": true, "CREATE": true, "DELETE": true, "DESC": true, "DESCRIBE": true,
	"DROP": true, "EXPLAIN": true, "EXPORT": true, "GRANT": true, "HELP": true, "INSERT": true, "INSTALL": true,
	"KILL": true, "LOAD": true, "LOCK": true, "PAUSE": true, "RECOVER": true, "REFRESH": true, "REPLACE": true,
	"RESTORE": true, "RESUME": true, "REVOKE": true, "ROLLBACK": true, "SELECT": true, "SET": true, "SHOW": true,
	"START": true, "STOP": true, "SWITCH": true, "SYNC": true, "TRUNCATE": true, "UNINSTALL": true, "UNLOCK": true,
	"UPDATE": true, "USE": true, "WARM": true, "WITH": true,
}

// objName is an optionally qualified name `db`.`table`.
type objName struct{ db, table string }

// qualifiedName reads `name` or `db`.`name` at toks[i]; it returns the name
// and the index after it (i when there is no name).
func qualifiedName(toks []token, i int) (objName, int) {
	if i >= len(toks) || toks[i].name() == "" {
		return objName{}, i
	}
	first := toks[i].name()
	if i+2 < len(toks) && toks[i+1].isPunct(".") && toks[i+2].name() != "" {
		return objName{db: first, table: toks[i+2].name()}, i + 3
	}
	return objName{table: first}, i + 1
}

// resolveDB picks the database of a statement: the explicit one, else the
// session's, else "No database selected".
func (ss *session) resolveDB(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if db := ss.currentDB(); db != "" {
		return db, nil
	}
	return "", errNoDB()
}

// knownDB returns errUnknownDB when db does not exist.
func (ss *session) knownDB(db string) error {
	if !slices.Contains(ss.databases(), db) {
		return errUnknownDB(db)
	}
	return nil
}

// systemDatabases are the databases every Doris FE lists besides the
// users' (fe InfoSchemaDb and MysqlDb, shown by SHOW DATABASES).
var systemDatabases = []string{"information_schema", "mysql"}

// databases lists the Backend's databases and the system ones, sorted.
func (ss *session) databases() []string {
	dbs := append(slices.Clone(ss.s.b.Databases()), systemDatabases...)
	slices.Sort(dbs)
	return slices.Compact(dbs)
}

func isHiddenColumn(name string) bool { return strings.HasPrefix(name, "__DORIS_") }
