package mysqlfront

import (
	"context"
	"errors"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// connHandler is the go-mysql Handler of one connection: the session, with
// the database named in the handshake held back until the password is
// checked. go-mysql reads the handshake's database before it authenticates;
// Doris authenticates first and answers access denied to a wrong password
// whatever the database (MysqlProto.negotiate).
type connHandler struct {
	*session

	authed      bool   // OnAuthSuccess ran (go-mysql calls both from one goroutine)
	handshakeDB string // database of the handshake response
}

// UseDB implements server.Handler.
func (h *connHandler) UseDB(db string) error {
	if !h.authed {
		h.handshakeDB = db
		return nil
	}
	return h.session.UseDB(db)
}

// authenticated selects the handshake's database, if any (an empty name is
// ignored, as Doris does).
func (h *connHandler) authenticated() error {
	h.authed = true
	if h.handshakeDB == "" {
		return nil
	}
	return h.session.UseDB(h.handshakeDB)
}

// DefaultQueryTimeout bounds one statement of the MySQL front unless
// WithQueryTimeout says otherwise. (Doris's query_timeout defaults to 900 s;
// the emulator is stricter so that a runaway SELECT cannot pin a test.)
const DefaultQueryTimeout = 30 * time.Second

// statementContext is the context of one statement: the query timeout from
// now (the session's query_timeout).
func (ss *session) statementContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ss.queryTimeout())
}

// timeoutError replaces the error of a statement whose context expired by
// Doris's answer: the timeout checker cancels the query with "query is
// timeout, killed by timeout checker" (fe qe/ConnectContext.java
// checkTimeout), sent as 1105 with errCode = 2.
func timeoutError(ctx context.Context, err error) error {
	var answered *timeoutAnswer
	if errors.As(err, &answered) {
		return answered.MyError
	}
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errf("query is timeout, killed by timeout checker")
	}
	return err
}

// timeoutAnswer is a statement's own answer to its timeout (a SELECT's
// "query timeout, query id = …", fe ResultReceiver.java), which
// timeoutError passes on instead of the timeout checker's.
type timeoutAnswer struct{ *mysql.MyError }
