// Package schema describes Doris tables: their columns, key model, sequence
// column and delete-sign support, and converts between that description and
// Doris DDL (CREATE TABLE as a user writes it, SHOW CREATE TABLE as Doris
// prints it). The client uses it to understand a target table; the emulator
// uses it to create and print tables.
package schema

// KeysType is a Doris data model.
type KeysType string

// Doris data models (docs/doris-facts.md §7).
const (
	DuplicateKeys KeysType = "DUPLICATE"
	UniqueKeys    KeysType = "UNIQUE"
	AggregateKeys KeysType = "AGGREGATE"
)

// AggType is the aggregation of a value column in an AGGREGATE KEY table.
type AggType string

// Aggregations (docs/doris-facts.md §7). The empty AggType marks a key column or a
// column of a non-aggregate table.
const (
	AggNone             AggType = ""
	AggSum              AggType = "SUM"
	AggMax              AggType = "MAX"
	AggMin              AggType = "MIN"
	AggReplace          AggType = "REPLACE"
	AggReplaceIfNotNull AggType = "REPLACE_IF_NOT_NULL"
	AggHLLUnion         AggType = "HLL_UNION"
	AggBitmapUnion      AggType = "BITMAP_UNION"
	AggQuantileUnion    AggType = "QUANTILE_UNION"
)

// Hidden column names Doris adds to Unique Key tables.
const (
	DeleteSignColumn = "__DORIS_DELETE_SIGN__"
	SequenceColumn   = "__DORIS_SEQUENCE_COL__"
	VersionColumn    = "__DORIS_VERSION_COL__"
)

// Column is one column of a table.
type Column struct {
	Name     string
	Type     string // upper-case Doris type as written, e.g. BIGINT, VARCHAR(16), DECIMAL(12,2)
	Nullable bool   // false when declared NOT NULL
	Agg      AggType
	Default  *string // DEFAULT value as text (unquoted); nil when none
	// DefaultExpr marks Default as an expression printed unquoted
	// (CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(3), CURRENT_DATE, PI, E,
	// BITMAP_EMPTY) rather than a literal printed as DEFAULT "value".
	DefaultExpr bool
	Comment     string
}

// Table describes one Doris table.
type Table struct {
	Database      string // qualifier written in the DDL (`db`.`t`); empty when none
	Name          string
	Columns       []Column
	Keys          KeysType
	KeyColumns    []string
	DistributedBy []string // HASH columns; empty for RANDOM distribution
	Buckets       int      // 0 means AUTO
	Properties    map[string]string
	Comment       string
}
