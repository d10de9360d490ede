package mysqlfront

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Doris reports analysis and execution failures as
// "errCode = 2, detailMessage = <text>" (fe DdlException/AnalysisException
// getMessage), with MySQL code 1105 unless an ErrorCode names another.
const dorisErrPrefix = "errCode = 2, detailMessage = "

// CodedError may be implemented by errors a Backend returns to choose the
// MySQL error code (default 1105, ER_UNKNOWN_ERROR), e.g. 1049 for an unknown
// database. Its Error() text must not carry the "errCode = 2" prefix.
type CodedError interface {
	error
	MySQLErrorCode() uint16
}

// dorisError builds a Doris-style MySQL error with the given code.
func dorisError(code uint16, format string, args ...any) *mysql.MyError {
	return mysql.NewError(code, dorisErrPrefix+fmt.Sprintf(format, args...))
}

// errf is a Doris-style error with code 1105.
func errf(format string, args ...any) *mysql.MyError {
	return dorisError(mysql.ER_UNKNOWN_ERROR, format, args...)
}

// errUnknownDB is Doris's ErrorCode.ERR_BAD_DB_ERROR (1049, 42000).
func errUnknownDB(db string) *mysql.MyError {
	return dorisError(mysql.ER_BAD_DB_ERROR, "Unknown database '%s'", db)
}

// errNoDB is Doris's ErrorCode.ERR_NO_DB_ERROR (1046, 3D000).
func errNoDB() *mysql.MyError {
	return dorisError(mysql.ER_NO_DB_ERROR, "No database selected")
}

// backendError maps an error of the Backend (or of the SQL engine) to a
// MySQL error: its CodedError code or 1105, with Doris's message prefix.
func backendError(err error) *mysql.MyError {
	var my *mysql.MyError
	if errors.As(err, &my) {
		return my
	}
	var ce CodedError
	if errors.As(err, &ce) {
		return dorisError(ce.MySQLErrorCode(), "%s", ce.Error())
	}
	return errf("%s", err.Error())
}

// stmtError carries a message through go-mysql's prepared-statement path,
// which wraps returned errors (errors.Trace) so that a *mysql.MyError loses
// its code and is re-sent as 1105 with "ERROR nnnn (state): " in the text.
// A plain error is sent as 1105 with exactly its message.
type stmtError struct{ msg string }

func (e stmtError) Error() string { return e.msg }

// forStmt converts an error for the prepared-statement path.
func forStmt(err error) error {
	if err == nil {
		return nil
	}
	var my *mysql.MyError
	if errors.As(err, &my) {
		return stmtError{msg: my.Message}
	}
	return stmtError{msg: err.Error()}
}
