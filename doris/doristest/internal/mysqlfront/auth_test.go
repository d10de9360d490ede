package mysqlfront

import (
	"errors"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// Failed logins get Doris's own answers: ERR_ACCESS_DENIED_ERROR (1045,
// 28000) "Access denied for user 'user@ip' (using password: YES|NO)", YES for
// an unknown user whatever the password (fe ErrorCode.java,
// mysql/privilege/UserManager.java checkPasswordInternal); not go-mysql's
// 1449 "The user specified as a definer does not exist" or its
// 'user'@'ip:port' text. The database of the DSN is checked after the
// password (MysqlProto.negotiate).
func TestAccessDenied_DorisAnswers(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.users["alice"] = "s3cret"
	f.dbs["demo"] = map[string]*fakeTable{}
	_, addr, pl := startGuarded(t, pwBackend{f})
	plain := newFakeBackend()
	plain.users["alice"] = "s3cret"
	_, plainAddr, plainPL := startGuarded(t, plain)

	for _, tc := range []struct {
		name, addr, user, password, tail string
		code                             uint16
		msg                              string
	}{
		{"unknown user", addr, "bob", "x", "/", 1045, "Access denied for user 'bob@127.0.0.1' (using password: YES)"},
		{"unknown user, no password", addr, "bob", "", "/", 1045, "Access denied for user 'bob@127.0.0.1' (using password: YES)"},
		{"wrong password", addr, "alice", "wrong", "/", 1045, "Access denied for user 'alice@127.0.0.1' (using password: YES)"},
		{"missing password", addr, "alice", "", "/", 1045, "Access denied for user 'alice@127.0.0.1' (using password: NO)"},
		{"password for an empty one", addr, "root", "x", "/", 1045, "Access denied for user 'root@127.0.0.1' (using password: YES)"},
		{"wrong password, unknown db", addr, "alice", "wrong", "/nope", 1045, "Access denied for user 'alice@127.0.0.1' (using password: YES)"},
		{"right password, unknown db", addr, "alice", "s3cret", "/nope", 1049, dorisErrPrefix + "Unknown database 'nope'"},
		{"clear text, wrong password", plainAddr, "alice", "nope", "/?allowCleartextPasswords=true", 1045, "Access denied for user 'alice@127.0.0.1' (using password: YES)"},
		{"clear text, unknown user", plainAddr, "bob", "x", "/?allowCleartextPasswords=true", 1045, "Access denied for user 'bob@127.0.0.1' (using password: YES)"},
	} {
		err := openDB(t, tc.user, tc.password, tc.addr, tc.tail).Ping()
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != tc.code || me.Message != tc.msg {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
			continue
		}
		if tc.code == 1045 && string(me.SQLState[:]) != "28000" {
			t.Errorf("%s: SQLSTATE %s, want 28000", tc.name, me.SQLState)
		}
	}
	if err := openDB(t, "alice", "s3cret", addr, "/demo").Ping(); err != nil {
		t.Errorf("right password, known db: %v", err)
	}
	if p := append(pl.list(), plainPL.list()...); len(p) != 0 {
		t.Fatalf("recovered panics: %v", p)
	}
}
