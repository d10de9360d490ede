package mysqlfront

import (
	"strconv"
	"strings"
)

// frontendConfig handles ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern'] (and
// SHOW FRONTEND CONFIG). Doris's columns are Key, Value, Type, IsMutable,
// MasterOnly, Comment. The Backend only knows keys and values: Type is
// inferred from the value (boolean, int, long, double or String), IsMutable
// and MasterOnly are "true" (true of every config the emulator models,
// docs/doris-facts.md §5) and Comment is empty.
func (ss *session) frontendConfig(st stmt, i int) (*resultSpec, error) {
	pat, _, ok := likeFilter(st, i)
	if !ok {
		return nil, syntaxError(st)
	}
	spec := stringCols("Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment")
	for _, kv := range ss.s.b.FrontendConfig(pat) {
		spec.rows = append(spec.rows, []any{kv[0], kv[1], configType(kv[1]), "true", "true", ""})
	}
	return &spec, nil
}

func configType(v string) string {
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		return "boolean"
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n == int64(int32(n)) {
			return "int"
		}
		return "long"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return "double"
	}
	return "String"
}
