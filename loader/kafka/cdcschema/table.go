package cdcschema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Table properties a created table gets.
const (
	// PropReplicationNum is Doris's replica count property.
	PropReplicationNum = "replication_num"
	// PropLightSchemaChange makes ADD COLUMN a metadata-only change
	// (default true since Doris 2.0; set explicitly so that evolution never
	// rewrites data).
	PropLightSchemaChange = "light_schema_change"
)

// TableOptions shape a created table.
type TableOptions struct {
	// Buckets is the bucket count; 0 means BUCKETS AUTO.
	Buckets int
	// Replication is replication_num; 0 leaves Doris's default.
	Replication int
}

// Columns maps fields to Doris columns: key columns (named in keys,
// case-insensitive) are NOT NULL, the others nullable whatever the source
// says, so that a later schema change can always add or widen them. A
// STRING key becomes VARCHAR(65533) (DorisSchemaFactory.java: Doris refuses
// STRING keys).
func Columns(fields []Field, keys []string) ([]schema.Column, error) {
	cols := make([]schema.Column, 0, len(fields))
	for _, f := range fields {
		typ, err := DorisType(f)
		if err != nil {
			return nil, err
		}
		key := containsFold(keys, f.Name)
		if key && typ == "STRING" {
			typ = "VARCHAR(" + strconv.Itoa(MaxVarcharLength) + ")"
		}
		cols = append(cols, schema.Column{Name: f.Name, Type: typ, Nullable: !key})
	}
	return cols, nil
}

// NewTable returns the Unique Key, merge-on-write table db.name for the
// row fields and primary key keys (the record key's fields): key columns
// first in key order (Doris requires the key columns to lead), hashed on
// the keys, light schema change on.
func NewTable(db, name string, fields []Field, keys []string, o TableOptions) (*schema.Table, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("table %s.%s: no primary key (the record key has no fields): a Unique Key table needs one", db, name)
	}
	cols, err := Columns(fields, keys)
	if err != nil {
		return nil, fmt.Errorf("table %s.%s: %w", db, name, err)
	}
	ordered := make([]schema.Column, 0, len(cols))
	keyNames := make([]string, 0, len(keys))
	for _, k := range keys {
		i := indexFold(cols, k)
		if i < 0 {
			return nil, fmt.Errorf("table %s.%s: key field %s is not a field of the row schema", db, name, k)
		}
		if err := checkKeyType(cols[i]); err != nil {
			return nil, fmt.Errorf("table %s.%s: %w", db, name, err)
		}
		ordered = append(ordered, cols[i])
		keyNames = append(keyNames, cols[i].Name)
	}
	for _, c := range cols {
		if !containsFold(keys, c.Name) {
			ordered = append(ordered, c)
		}
	}
	props := map[string]string{schema.PropMergeOnWrite: "true", PropLightSchemaChange: "true"}
	if o.Replication > 0 {
		props[PropReplicationNum] = strconv.Itoa(o.Replication)
	}
	return &schema.Table{
		Database: db, Name: name, Columns: ordered, Keys: schema.UniqueKeys, KeyColumns: keyNames,
		DistributedBy: keyNames, Buckets: max(o.Buckets, 0), Properties: props,
	}, nil
}

// checkKeyType refuses the types Doris does not allow as keys (fe
// ColumnDef / CreateTableInfo: FLOAT, DOUBLE, STRING, JSON and complex
// types cannot be key columns).
func checkKeyType(c schema.Column) error {
	base := c.Type
	if i := strings.IndexAny(base, "(<"); i >= 0 {
		base = base[:i]
	}
	switch base {
	case "FLOAT", "DOUBLE", "STRING", "JSON", "ARRAY", "MAP", "STRUCT":
		return fmt.Errorf("key column %s has type %s, which Doris does not allow in a key", c.Name, c.Type)
	}
	return nil
}

// TypeChangeError: an incoming field's type cannot be stored in the
// existing column by a light schema change (or at all).
type TypeChangeError struct {
	Table, Column    string
	OldType, NewType string
}

func (e *TypeChangeError) Error() string {
	return fmt.Sprintf("table %s column %s: the source type changed from %s to %s, which schema evolution (add_columns) "+
		"cannot apply: it never drops, narrows or rewrites a column; change the column by hand "+
		"(ALTER TABLE … MODIFY COLUMN) or load into a new table", e.Table, e.Column, e.OldType, e.NewType)
}

// Change is the schema change one row schema needs.
type Change struct {
	// Add are the columns to add (ALTER TABLE … ADD COLUMN), in field order.
	Add []schema.Column
	// Widen are existing VARCHAR columns to lengthen (MODIFY COLUMN to a
	// longer VARCHAR: a light schema change).
	Widen []schema.Column
}

// Empty reports whether nothing needs to change.
func (c Change) Empty() bool { return len(c.Add) == 0 && len(c.Widen) == 0 }

// Plan compares fields with table t and returns what evolution must do.
// A field t lacks is added (nullable); a field whose type t holds already
// (same type, or t's column is at least as wide: a longer VARCHAR or
// STRING, a larger integer or decimal) needs nothing; a longer VARCHAR is
// widened; any other type change is a *TypeChangeError. Columns t has and
// the fields lack are kept (never dropped).
func Plan(t *schema.Table, fields []Field) (Change, error) {
	var ch Change
	var errs []error
	for _, f := range fields {
		typ, err := DorisType(f)
		if err != nil {
			return Change{}, fmt.Errorf("table %s.%s: %w", t.Database, t.Name, err)
		}
		col, _, ok := t.Column(f.Name)
		if !ok {
			ch.Add = append(ch.Add, schema.Column{Name: f.Name, Type: typ, Nullable: true})
			continue
		}
		if typ == "STRING" && t.IsKey(col.Name) {
			typ = "VARCHAR(" + strconv.Itoa(MaxVarcharLength) + ")" // the key rule of Columns
		}
		switch Compare(col.Type, typ) {
		case Holds:
		case Widens:
			c := col
			c.Type = typ
			ch.Widen = append(ch.Widen, c)
		default:
			errs = append(errs, &TypeChangeError{Table: t.Database + "." + t.Name, Column: col.Name, OldType: col.Type, NewType: typ})
		}
	}
	if len(errs) > 0 {
		return Change{}, errors.Join(errs...)
	}
	return ch, nil
}

// Fit is how an existing column type relates to an incoming one.
type Fit int

// Compare results.
const (
	// Incompatible: the incoming type needs a change evolution does not make.
	Incompatible Fit = iota
	// Holds: the column stores every value of the incoming type as it is.
	Holds
	// Widens: the column must be lengthened (VARCHAR(n) → VARCHAR(m), m > n),
	// a light schema change in Doris.
	Widens
)

var intRank = map[string]int{"BOOLEAN": 0, "TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4, "LARGEINT": 5}

// Compare says whether column type have already holds values of type in,
// needs a light widening, or is incompatible. INT→BIGINT and other numeric
// widenings are heavy schema changes in Doris (they rewrite data; doris-website
// table-design/schema-change.md: light schema change covers adding and
// dropping value columns and lengthening VARCHAR), so evolution does not
// make them: a narrower incoming type is held, a wider one is Incompatible.
func Compare(have, in string) Fit {
	a, b := splitType(have), splitType(in)
	switch {
	case strings.EqualFold(have, in), a.base == b.base && len(a.args) == 0 && len(b.args) == 0:
		return Holds
	case a.base == "STRING" && (b.base == "VARCHAR" || b.base == "CHAR" || b.base == "STRING"):
		return Holds
	case a.base == "VARCHAR" && (b.base == "VARCHAR" || b.base == "CHAR"):
		if a.arg(0, 1) >= b.arg(0, 1) {
			return Holds
		}
		return Widens
	case a.base == "VARCHAR" && b.base == "STRING":
		return Incompatible // VARCHAR → STRING rewrites data
	case a.base != "BOOLEAN" && b.base != "BOOLEAN" && intRank[a.base] > 0 && intRank[b.base] > 0:
		if intRank[a.base] >= intRank[b.base] {
			return Holds
		}
	case a.base == "DECIMAL" && b.base == "DECIMAL":
		// Holds when both the integer digits and the scale fit.
		if a.arg(1, 0) >= b.arg(1, 0) && a.arg(0, 9)-a.arg(1, 0) >= b.arg(0, 9)-b.arg(1, 0) {
			return Holds
		}
	case a.base == "DOUBLE" && b.base == "FLOAT":
		return Holds
	case a.base == "DATETIME" && b.base == "DATETIME":
		if a.arg(0, 0) >= b.arg(0, 0) {
			return Holds
		}
	}
	return Incompatible
}

type typeParts struct {
	base string
	args []int
}

func (t typeParts) arg(i, def int) int {
	if i < len(t.args) {
		return t.args[i]
	}
	return def
}

// splitType splits "DECIMAL(12,2)" into DECIMAL and [12 2], folding the
// Doris aliases (DECIMALV3, DATETIMEV2, DATEV2, TEXT, INTEGER, JSONB).
func splitType(s string) typeParts {
	s = strings.ToUpper(strings.TrimSpace(s))
	t := typeParts{base: s}
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		t.base = strings.TrimSpace(s[:i])
		for _, a := range strings.Split(s[i+1:len(s)-1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(a))
			t.args = append(t.args, n)
		}
	}
	switch t.base {
	case "DECIMALV2", "DECIMALV3":
		t.base = "DECIMAL"
	case "DATETIMEV2", "DATETIMEV1":
		t.base = "DATETIME"
	case "DATEV2", "DATEV1":
		t.base = "DATE"
	case "TEXT":
		t.base = "STRING"
	case "INTEGER":
		t.base = "INT"
	case "JSONB":
		t.base = "JSON"
	case "BOOL":
		t.base = "BOOLEAN"
	}
	return t
}

func containsFold(names []string, n string) bool {
	for _, k := range names {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

func indexFold(cols []schema.Column, n string) int {
	for i, c := range cols {
		if strings.EqualFold(c.Name, n) {
			return i
		}
	}
	return -1
}
