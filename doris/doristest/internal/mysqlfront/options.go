package mysqlfront

import (
	"log/slog"
	"time"
)

// Option configures a Server.
type Option interface{ apply(*config) }

type optFunc func(*config)

func (f optFunc) apply(c *config) { f(c) }

type config struct {
	logger         *slog.Logger
	serverVersion  string
	versionComment string
	queryTimeout   time.Duration
}

func defaultConfig() config {
	return config{
		logger:         slog.New(slog.DiscardHandler),
		serverVersion:  MySQLServerVersion,
		versionComment: "Doris version " + DorisBuildVersion,
		queryTimeout:   DefaultQueryTimeout,
	}
}

// WithLogger sets the logger for connection-level events (default: discard).
func WithLogger(l *slog.Logger) Option {
	return optFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithServerVersion sets the version sent in the handshake and answered to
// `SELECT @@version` (default "5.7.99", what Doris FE reports).
func WithServerVersion(v string) Option {
	return optFunc(func(c *config) { c.serverVersion = v })
}

// WithVersionComment sets the answer to `SELECT @@version_comment`
// (default "Doris version " + DorisBuildVersion; Doris answers
// "Doris version doris-<release>-<commit>", fe GlobalVariable
// versionComment).
func WithVersionComment(v string) Option {
	return optFunc(func(c *config) { c.versionComment = v })
}

// WithQueryTimeout sets the deadline of each statement (COM_QUERY,
// COM_STMT_EXECUTE), which is also the default of the session variable
// query_timeout (a session's `SET query_timeout = N` overrides it for that
// session); one that runs longer fails with Doris's query timeout error.
// Default DefaultQueryTimeout; d <= 0 keeps the default.
func WithQueryTimeout(d time.Duration) Option {
	return optFunc(func(c *config) {
		if d > 0 {
			c.queryTimeout = d
		}
	})
}
