package mysqlfront

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// defaultVars are the system variables clients read at connect time
// (mysql CLI, go-sql-driver, JDBC), with values close to a Doris FE's.
func (ss *session) defaultVars() map[string]any {
	cfg := ss.s.cfg
	return map[string]any{
		"auto_increment_increment": int64(1),
		"autocommit":               int64(1),
		"character_set_client":     "utf8mb4",
		"character_set_connection": "utf8mb4",
		"character_set_database":   "utf8mb4",
		"character_set_filesystem": "binary",
		"character_set_system":     "utf8mb3",
		"character_set_results":    "utf8mb4",
		"character_set_server":     "utf8mb4",
		"collation_connection":     "utf8mb4_0900_bin",
		"collation_database":       "utf8mb4_0900_bin",
		"collation_server":         "utf8mb4_0900_bin",
		"init_connect":             "",
		"interactive_timeout":      int64(3600),
		"language":                 "/palo/share/english/",
		"license":                  "Apache License, Version 2.0",
		"lower_case_table_names":   int64(0),
		"max_allowed_packet":       int64(16777216),
		"net_buffer_length":        int64(16384),
		"net_write_timeout":        int64(600),
		"performance_schema":       int64(0),
		"query_cache_size":         int64(1048576),
		"query_cache_type":         int64(0),
		"query_timeout":            int64(cfg.queryTimeout / time.Second),
		"sql_mode":                 "ONLY_FULL_GROUP_BY",
		"sql_select_limit":         int64(9223372036854775807),
		"system_time_zone":         "UTC",
		"time_zone":                "UTC",
		"transaction_isolation":    "REPEATABLE-READ",
		"transaction_read_only":    int64(0),
		"tx_isolation":             "REPEATABLE-READ",
		"tx_read_only":             int64(0),
		"version":                  cfg.serverVersion,
		"version_comment":          cfg.versionComment,
		"wait_timeout":             int64(28800),
	}
}

// variable returns a system variable: the session's SET value, else the
// default. name may carry a global./session./local. scope.
func (ss *session) variable(name string) (any, bool) {
	n := strings.ToLower(name)
	for _, p := range []string{"global.", "session.", "local."} {
		n = strings.TrimPrefix(n, p)
	}
	ss.mu.Lock()
	v, ok := ss.vars[n]
	ss.mu.Unlock()
	if ok {
		return v, true
	}
	v, ok = ss.defaultVars()[n]
	return v, ok
}

// set handles SET statements: assignments of literals to system variables
// (`SET x = 1`, `SET @@session.x = 'v'`, `SET SESSION x = v`) and to user
// variables (`SET @a = 5`, `SET @a := 'x'`, a negative number, NULL) are
// kept for the session; SET NAMES and other forms are acknowledged and
// ignored. A user variable set to anything but a literal is refused rather
// than kept wrong.
func (ss *session) set(st stmt) error {
	toks := st.toks[1:]
	var items [][]token
	start := 0
	for i, t := range toks {
		if t.isPunct(",") {
			items = append(items, toks[start:i])
			start = i + 1
		}
	}
	items = append(items, toks[start:])
	for _, it := range items {
		if len(it) > 0 && (it[0].is("SESSION") || it[0].is("GLOBAL") || it[0].is("LOCAL")) {
			it = it[1:]
		}
		if len(it) >= 3 && it[0].isUserVar() {
			if err := ss.setUserVar(st, it); err != nil {
				return err
			}
			continue
		}
		if len(it) != 3 || !(it[1].isPunct("=") || it[1].val == ":") {
			continue
		}
		var name string
		switch {
		case it[0].kind == tokVar && strings.HasPrefix(st.text[it[0].start:], "@@"):
			name = it[0].val
		case it[0].kind == tokWord:
			name = it[0].val
		default:
			continue
		}
		var v any
		switch it[2].kind {
		case tokString:
			v = it[2].val
		case tokNumber, tokWord:
			v = literalValue(it[2])
		default:
			continue
		}
		n := strings.ToLower(name)
		for _, p := range []string{"global.", "session.", "local."} {
			n = strings.TrimPrefix(n, p)
		}
		ss.mu.Lock()
		ss.vars[n] = v
		ss.mu.Unlock()
	}
	return nil
}

// setUserVar handles one `@name = literal` (or `:=`) item of SET.
func (ss *session) setUserVar(st stmt, it []token) error {
	rest := it[1:]
	switch {
	case rest[0].isPunct(":") && len(rest) > 1 && rest[1].isPunct("="):
		rest = rest[2:]
	case rest[0].isPunct("="):
		rest = rest[1:]
	default:
		return syntaxError(st)
	}
	v, handled, err := ss.localValue(rest)
	if err != nil {
		return err
	}
	if !handled {
		return errf("the emulator sets user variables to literals only (SET @%s = 5, = 'text', = NULL); got: %s",
			it[0].val, st.text[rest[0].start:rest[len(rest)-1].end])
	}
	ss.mu.Lock()
	ss.uvars[strings.ToLower(it[0].val)] = v
	ss.mu.Unlock()
	return nil
}

// showVariables handles SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'p'].
func (ss *session) showVariables(st stmt, i int) (*resultSpec, error) {
	pat, has, ok := likeFilter(st, i)
	if !ok {
		return nil, syntaxError(st)
	}
	all := ss.defaultVars()
	ss.mu.Lock()
	maps.Copy(all, ss.vars)
	ss.mu.Unlock()
	spec := stringCols("Variable_name", "Value")
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if has && !likeMatch(pat, k) {
			continue
		}
		s, err := textValue(0, all[k])
		if err != nil {
			continue
		}
		spec.rows = append(spec.rows, []any{k, s})
	}
	return &spec, nil
}

// errUnknownVar is MySQL's / Doris's ER_UNKNOWN_SYSTEM_VARIABLE.
func errUnknownVar(name string) *mysql.MyError {
	return dorisError(mysql.ER_UNKNOWN_SYSTEM_VARIABLE, "Unknown system variable '%s'", name)
}

// queryTimeout is the session's query_timeout (seconds) as a duration.
func (ss *session) queryTimeout() time.Duration {
	v, _ := ss.variable("query_timeout")
	switch x := v.(type) {
	case int64:
		if x > 0 {
			return time.Duration(x) * time.Second
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return ss.s.cfg.queryTimeout
}
