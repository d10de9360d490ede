package mysqlfront

import (
	"errors"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// expiredStatements gives every statement an already expired context.
var expiredStatements = optFunc(func(c *config) { c.queryTimeout = -time.Second })

// A statement that outlives the query timeout (here: on the SQL engine, as
// FROM-less selects are answered without it) gets Doris's timeout checker
// answer (fe qe/ConnectContext.java checkTimeout), on the text and the
// prepared path.
func TestQueryTimeout(t *testing.T) {
	t.Parallel()
	_, addr, pl := startGuarded(t, pwBackend{newFakeBackend()}, expiredStatements)
	db := openDB(t, "root", "", addr, "/?interpolateParams=false")
	const want = dorisErrPrefix + "query is timeout, killed by timeout checker"
	var n int
	for name, err := range map[string]error{
		"text":     db.QueryRow("SELECT 1 FROM (SELECT 1) AS t").Scan(&n),
		"prepared": db.QueryRow("SELECT ? FROM (SELECT 1) AS t", 1).Scan(&n),
	} {
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1105 || me.Message != want {
			t.Errorf("%s: %v, want 1105 %q", name, err, want)
		}
	}
	if p := pl.list(); len(p) != 0 {
		t.Fatalf("recovered panics: %v", p)
	}
}

func TestQueryTimeoutOption(t *testing.T) {
	t.Parallel()
	if got := New(newFakeBackend()).cfg.queryTimeout; got != DefaultQueryTimeout {
		t.Errorf("default %v, want %v", got, DefaultQueryTimeout)
	}
	if got := New(newFakeBackend(), WithQueryTimeout(time.Minute)).cfg.queryTimeout; got != time.Minute {
		t.Errorf("WithQueryTimeout(1m): %v", got)
	}
	if got := New(newFakeBackend(), WithQueryTimeout(0)).cfg.queryTimeout; got != DefaultQueryTimeout {
		t.Errorf("WithQueryTimeout(0): %v, want the default", got)
	}
}
