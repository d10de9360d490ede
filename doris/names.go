package doris

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Doris's identifier rules (fe FeNameFormat.java): a database is
// COMMON_NAME_REGEX ^[a-zA-Z][a-zA-Z0-9-_]{0,63}$, a table
// TABLE_NAME_REGEX ^[a-zA-Z][a-zA-Z0-9-_]*$ of at most
// table_name_length_limit (fe Config, default 64) characters. With the
// session variable enable_unicode_name_support, letters (\p{L}) are allowed
// too (the UNICODE_* variants); these rules accept them, so a name Doris
// can hold is never refused here. Neither allows '.', '/' or spaces.
var (
	dbNameRE    = regexp.MustCompile(`^[a-zA-Z\p{L}][a-zA-Z0-9\-_\p{L}]{0,63}$`)
	tableNameRE = regexp.MustCompile(`^[a-zA-Z\p{L}][a-zA-Z0-9\-_\p{L}]*$`)
)

// MaxTableNameLength is Doris's default table_name_length_limit.
const MaxTableNameLength = 64

// NameError is a database or table name Doris would refuse.
type NameError struct {
	Kind string // "database" or "table"
	Name string
	Rule string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("doris %s name %q: %s", e.Kind, e.Name, e.Rule)
}

// ValidateDatabaseName checks db against Doris's database name rule
// (FeNameFormat.checkDbName): a letter, then up to 63 letters, digits, '-'
// or '_'. Errors are *NameError.
func ValidateDatabaseName(db string) error {
	if !dbNameRE.MatchString(db) {
		return &NameError{Kind: "database", Name: db,
			Rule: "want a letter then at most 63 letters, digits, '-' or '_' (Doris FeNameFormat COMMON_NAME_REGEX)"}
	}
	return nil
}

// ValidateTableName checks table against Doris's table name rule
// (FeNameFormat.checkTableName): a letter, then letters, digits, '-' or '_',
// at most MaxTableNameLength characters. Errors are *NameError.
func ValidateTableName(table string) error {
	if !tableNameRE.MatchString(table) || utf8.RuneCountInString(table) > MaxTableNameLength {
		return &NameError{Kind: "table", Name: table,
			Rule: fmt.Sprintf("want a letter then letters, digits, '-' or '_', at most %d characters (Doris FeNameFormat TABLE_NAME_REGEX, table_name_length_limit)", MaxTableNameLength)}
	}
	return nil
}
