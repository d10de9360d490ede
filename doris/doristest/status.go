package doristest

import (
	"fmt"

	"github.com/doris-sink/doris-sink/doris"
)

// TStatusCode names used in BE messages (docs/doris-facts.md §2.4, BE-ST).
const (
	codeAnalysis     = "ANALYSIS_ERROR"
	codeNotFound     = "NOT_FOUND"
	codeLabelExists  = "LABEL_ALREADY_EXISTS"
	codeInternal     = "INTERNAL_ERROR"
	codeNotAuth      = "NOT_AUTHORIZED"
	codeDataQuality  = "DATA_QUALITY_ERROR"
	codeFileType     = "DATA_FILE_TYPE_ERROR"
	codeInvalidArg   = "INVALID_ARGUMENT"
	codePublishTmout = "PUBLISH_TIMEOUT"
)

// FE InternalErrorCode values printed as "errCode = N" (docs/doris-facts.md §2.4).
const (
	errCodeInternal     = 2 // INTERNAL_ERR, also what released builds print for AnalysisException
	errCodeMetaNotFound = 7 // META_NOT_FOUND_ERR
)

// feError is an exception raised by the emulated FE (a Java UserException)
// on a thrift call from the BE. The BE wraps it as
// "[<code>]TStatus: errCode = N, detailMessage = <msg>" (docs/doris-facts.md §2.4).
type feError struct {
	code     string // TStatusCode the FE maps the exception to
	errCode  int    // InternalErrorCode
	msg      string // detail message
	existing doris.TxnStatus
}

func (e *feError) Error() string { return e.msg }

// detail is UserException.getMessage().
func (e *feError) detail() string {
	return fmt.Sprintf("errCode = %d, detailMessage = %s", e.errCode, e.msg)
}

// beMessage is the Stream Load "Message" text (Status::to_string_no_stack).
func (e *feError) beMessage() string { return "[" + e.code + "]TStatus: " + e.detail() }

func analysisErr(format string, args ...any) *feError {
	return &feError{code: codeAnalysis, errCode: errCodeInternal, msg: fmt.Sprintf(format, args...)}
}

// unknownDBErr is MetaNotFoundException("unknown database, database=<db>")
// (FE-FSI loadTxnBeginImpl, docs/doris-facts.md §2.4).
func unknownDBErr(db string) *feError {
	return &feError{code: codeNotFound, errCode: errCodeMetaNotFound, msg: "unknown database, database=" + db}
}

// accessDeniedLocked checks a plain password like Auth.checkPlainPassword and
// returns ErrorCode.ERR_ACCESS_DENIED_ERROR's text on failure, "" on
// success. Doris passes user and host as one argument, so the text reads
// "Access denied for user 'root@127.0.0.1' (using password: YES)"; an unknown
// user always says YES (UserManager.checkPasswordInternal, docs/doris-facts.md §1.3).
func (s *Server) accessDeniedLocked(user, password, ip string) string {
	pw, known := s.users[user]
	if known && pw == password {
		return ""
	}
	using := "YES"
	if known && password == "" {
		using = "NO"
	}
	return fmt.Sprintf("Access denied for user '%s@%s' (using password: %s)", user, ip, using)
}
