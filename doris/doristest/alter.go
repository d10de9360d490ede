package doristest

// Behavior: ALTER TABLE … ADD COLUMN / DROP COLUMN / MODIFY COLUMN, the
// checks of fe SchemaChangeHandler.java (addColumnInternal,
// processDropColumn, processModifyColumn, the distribution-column checks of
// createJob) and Column.checkSchemaChangeAllowed, with their messages:
//   - ADD: "Can not add column which already exists in base table: c";
//     an aggregation on a Duplicate / Unique column is refused; on an
//     AGGREGATE table a column without aggregation is a key; a SUM column's
//     default must be 0; AFTER a missing column: "Column[c] does not found".
//     Placed after the last key column (keys), after c (AFTER c), first
//     (FIRST), else after the last visible column.
//   - DROP: "Column does not exists: c"; a Unique key "Can not drop key
//     column in Unique data model table"; an AGGREGATE key when a REPLACE
//     value exists; the sequence mapping column; a distribution column
//     "Distribution column[c] cannot be dropped. index[t]".
//   - MODIFY: "Column[c] does not exists"; a distribution column "Can not
//     modify distribution column[c]. index[t]"; nullable → NOT NULL, another
//     default or aggregation, a shorter string, a narrowing type: refused
//     (typeChangeAllowed).
// The change is applied at once, light or heavy (Doris's heavy schema change
// runs a job; its wait for earlier txns is not emulated). Existing rows read
// an added column as its default (NULL when none), and a load begun before
// the change and committed after it is remapped by column name
// (table.Table.Alter). The table keeps its catalog id.
//
// Not emulated (refused with a doristest message): changing the key columns
// of a Unique or Aggregate table, dropping the last key of a Duplicate table.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// alterTable applies the clauses of one ALTER TABLE, all or none.
func (s *Server) alterTable(db, name string, ops []mysqlfront.AlterOp) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	te, err := s.lookupTable(db, name)
	if err != nil {
		return err
	}
	cur := te.schema()
	ns := cloneSchema(cur)
	from := make([]int, len(cur.Columns))
	for i := range from {
		from[i] = i
	}
	for _, op := range ops {
		switch op.Kind {
		case mysqlfront.AlterAddColumn:
			err = addColumn(ns, &from, op)
		case mysqlfront.AlterDropColumn:
			err = dropColumn(ns, &from, op.Column.Name)
		case mysqlfront.AlterModifyColumn:
			err = modifyColumn(ns, &from, op)
		default:
			err = fmt.Errorf("ALTER TABLE clause %d is not emulated by doristest", op.Kind)
		}
		if err != nil {
			return err
		}
	}
	if err := te.data.Alter(ns, from); err != nil {
		return ddlErr("%v", err)
	}
	te.schemaVersion++
	return nil
}

// ddlErr is a DdlException: MySQL 1105 with "errCode = 2" (the front's prefix).
func ddlErr(format string, args ...any) *sqlError { return sqlErr(1105, format, args...) }

func cloneSchema(t *schema.Table) *schema.Table {
	c := *t
	c.Columns = slices.Clone(t.Columns)
	c.KeyColumns = slices.Clone(t.KeyColumns)
	c.DistributedBy = slices.Clone(t.DistributedBy)
	c.Properties = make(map[string]string, len(t.Properties))
	for k, v := range t.Properties {
		c.Properties[k] = v
	}
	return &c
}

func colIndex(t *schema.Table, name string) int {
	return slices.IndexFunc(t.Columns, func(c schema.Column) bool { return strings.EqualFold(c.Name, name) })
}

func isKeyCol(t *schema.Table, name string) bool {
	return slices.ContainsFunc(t.KeyColumns, func(k string) bool { return strings.EqualFold(k, name) })
}

func isDistCol(t *schema.Table, name string) bool {
	return slices.ContainsFunc(t.DistributedBy, func(k string) bool { return strings.EqualFold(k, name) })
}

// insertColumn puts c at position pos of t and from (-1: a new column).
func insertColumn(t *schema.Table, from *[]int, pos int, c schema.Column, src int) {
	t.Columns = slices.Insert(t.Columns, pos, c)
	*from = slices.Insert(*from, pos, src)
}

// position computes where a column goes: after op.After, first, after the
// last key (keys), or after the last visible column.
func position(t *schema.Table, op mysqlfront.AlterOp, key bool, missing string) (int, error) {
	switch {
	case op.First:
		return 0, nil
	case op.After != "":
		i := colIndex(t, op.After)
		if i < 0 {
			return 0, ddlErr(missing, op.After)
		}
		return i + 1, nil
	case key:
		last := -1
		for i, c := range t.Columns {
			if isKeyCol(t, c.Name) {
				last = i
			}
		}
		return last + 1, nil
	}
	last := -1
	for i, c := range t.Columns {
		if !strings.HasPrefix(strings.ToUpper(c.Name), "__DORIS_") {
			last = i
		}
	}
	return last + 1, nil
}

func aggMethodErr(t *schema.Table, c string) error {
	model := "Duplicate"
	if t.Keys == schema.UniqueKeys {
		model = "Unique"
	}
	return ddlErr("Can not assign aggregation method on column in %s data model table: %s", model, c)
}

func addColumn(t *schema.Table, from *[]int, op mysqlfront.AlterOp) error {
	c := op.Column
	key := op.Key
	switch t.Keys {
	case schema.AggregateKeys:
		if key && c.Agg != schema.AggNone {
			return ddlErr("Can not assign aggregation method on key column: %s", c.Name)
		}
		if c.Agg == schema.AggNone {
			key = true
		} else if c.Agg == schema.AggSum && c.Default != nil && *c.Default != "0" {
			return ddlErr("The default value of '%s' with SUM aggregation function must be zero", c.Name)
		}
	default:
		if c.Agg != schema.AggNone {
			return aggMethodErr(t, c.Name)
		}
	}
	if colIndex(t, c.Name) >= 0 {
		return ddlErr("Can not add column which already exists in base table: %s", c.Name)
	}
	if key && t.Keys != schema.DuplicateKeys {
		return ddlErr("adding key column %s to a %s KEY table is not emulated by doristest", c.Name, t.Keys)
	}
	pos, err := position(t, op, key, "Column[%s] does not found")
	if err != nil {
		return err
	}
	insertColumn(t, from, pos, c, -1)
	if key {
		t.KeyColumns = append(t.KeyColumns, c.Name)
		slices.SortStableFunc(t.KeyColumns, func(a, b string) int { return colIndex(t, a) - colIndex(t, b) })
	}
	return nil
}

func dropColumn(t *schema.Table, from *[]int, name string) error {
	i := colIndex(t, name)
	key := i >= 0 && isKeyCol(t, name)
	switch t.Keys {
	case schema.UniqueKeys:
		if key {
			return ddlErr("Can not drop key column in Unique data model table")
		}
		if seq := t.Properties["function_column.sequence_col"]; seq != "" && strings.EqualFold(seq, name) {
			return ddlErr("Can not drop sequence mapping column[%s] in Unique data model table[%s]", name, t.Name)
		}
	case schema.AggregateKeys:
		if key {
			if slices.ContainsFunc(t.Columns, func(c schema.Column) bool {
				return c.Agg == schema.AggReplace || c.Agg == schema.AggReplaceIfNotNull
			}) {
				return ddlErr("Can not drop key column when table has value column with REPLACE aggregation method")
			}
			return ddlErr("dropping key column %s of an AGGREGATE KEY table (re-aggregation) is not emulated by doristest", name)
		}
	}
	if i < 0 {
		return ddlErr("Column does not exists: %s", name)
	}
	if isDistCol(t, name) {
		return ddlErr("Distribution column[%s] cannot be dropped. index[%s]", t.Columns[i].Name, t.Name)
	}
	if key && len(t.KeyColumns) == 1 {
		return ddlErr("dropping the last key column %s is not emulated by doristest", name)
	}
	t.Columns = slices.Delete(t.Columns, i, i+1)
	*from = slices.Delete(*from, i, i+1)
	t.KeyColumns = slices.DeleteFunc(t.KeyColumns, func(k string) bool { return strings.EqualFold(k, name) })
	return nil
}

func modifyColumn(t *schema.Table, from *[]int, op mysqlfront.AlterOp) error {
	c := op.Column
	switch t.Keys {
	case schema.AggregateKeys:
		isKey := isKeyCol(t, c.Name)
		if isKey && c.Agg != schema.AggNone {
			return ddlErr("Can not assign aggregation method on key column: %s", c.Name)
		}
		if !isKey && c.Agg == schema.AggNone {
			return ddlErr("Aggregate method must be specified for value column: %s", c.Name)
		}
	default:
		if c.Agg != schema.AggNone {
			return aggMethodErr(t, c.Name)
		}
	}
	i := colIndex(t, c.Name)
	if i < 0 {
		return ddlErr("Column[%s] does not exists", c.Name)
	}
	old := t.Columns[i]
	c.Name = old.Name // Doris keeps the original spelling
	if err := checkSchemaChangeAllowed(old, c); err != nil {
		return err
	}
	changed := !columnsEqual(old, c)
	if changed && isDistCol(t, old.Name) {
		return ddlErr("Can not modify distribution column[%s]. index[%s]", old.Name, t.Name)
	}
	if changed && isKeyCol(t, old.Name) && t.Keys != schema.DuplicateKeys {
		return ddlErr("modifying key column %s of a %s KEY table is not emulated by doristest", old.Name, t.Keys)
	}
	if seq := t.Properties["function_column.sequence_col"]; seq != "" && strings.EqualFold(seq, old.Name) && old.Type != c.Type {
		return ddlErr("Can not alter sequence column[%s]", old.Name)
	}
	src := (*from)[i]
	if !op.First && op.After == "" {
		t.Columns[i] = c
		return nil
	}
	t.Columns = slices.Delete(t.Columns, i, i+1)
	*from = slices.Delete(*from, i, i+1)
	pos, err := position(t, op, false, "Column[%s] does not exists")
	if err != nil {
		return err
	}
	insertColumn(t, from, pos, c, src)
	return nil
}

func columnsEqual(a, b schema.Column) bool {
	return a.Type == b.Type && a.Nullable == b.Nullable && a.Agg == b.Agg && equalDefault(a.Default, b.Default)
}

func equalDefault(a, b *string) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	}
	return *a == *b
}

// checkSchemaChangeAllowed is fe Column.checkSchemaChangeAllowed plus the
// type matrix of the schema-change manual (doris-website
// table-design/schema-change.md "Modify Column Type").
func checkSchemaChangeAllowed(old, nw schema.Column) error {
	if err := typeChangeAllowed(old.Type, nw.Type); err != nil {
		return err
	}
	if old.Agg != nw.Agg {
		return ddlErr("Can not change aggregation type")
	}
	if old.Nullable && !nw.Nullable {
		return ddlErr("Can not change from nullable to non-nullable")
	}
	if !equalDefault(old.Default, nw.Default) {
		return ddlErr("Can not change default value")
	}
	return nil
}

// dorisType is a column type split into its base name and arguments.
type dorisType struct {
	base string
	args []int
}

func parseDorisType(s string) dorisType {
	s = strings.ToUpper(strings.TrimSpace(s))
	t := dorisType{base: s}
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		t.base = strings.TrimSpace(s[:i])
		for _, a := range strings.Split(s[i+1:len(s)-1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(a))
			t.args = append(t.args, n)
		}
	}
	switch t.base {
	case "INTEGER":
		t.base = "INT"
	case "TEXT":
		t.base = "STRING"
	case "DECIMALV2", "DECIMALV3":
		t.base = "DECIMAL"
	case "DATEV2":
		t.base = "DATE"
	case "DATETIMEV2":
		t.base = "DATETIME"
	}
	return t
}

var intRank = map[string]int{"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4, "LARGEINT": 5}

func isNumeric(b string) bool {
	return intRank[b] > 0 || b == "FLOAT" || b == "DOUBLE" || b == "DECIMAL"
}

func isChar(b string) bool { return b == "CHAR" || b == "VARCHAR" }

func (t dorisType) arg(i, def int) int {
	if i < len(t.args) {
		return t.args[i]
	}
	return def
}

// typeChangeAllowed follows the conversions Doris's schema change supports:
// integers and floats to larger numeric types, numbers to VARCHAR / STRING,
// a longer VARCHAR, CHAR/VARCHAR to numbers and DATE, DATE ↔ DATETIME, and
// anything but DATE/DATETIME to STRING; "Cannot shorten string length" and
// "Can not change X to Y" otherwise.
func typeChangeAllowed(from, to string) error {
	a, b := parseDorisType(from), parseDorisType(to)
	refuse := func() error { return ddlErr("Can not change %s to %s", a.base, b.base) }
	switch {
	case isChar(a.base) && isChar(b.base):
		if a.base == "VARCHAR" && b.base == "CHAR" {
			return refuse()
		}
		if a.arg(0, 65533) > b.arg(0, 65533) {
			return ddlErr("Cannot shorten string length")
		}
		return nil
	case a.base == b.base:
		if a.base == "DECIMAL" {
			if b.arg(1, 0) != a.arg(1, 0) {
				return ddlErr("Cannot change scale")
			}
			if b.arg(0, 9) < a.arg(0, 9) {
				return ddlErr("Cannot change precision")
			}
		}
		return nil
	case intRank[a.base] > 0 && intRank[b.base] > 0:
		if intRank[b.base] < intRank[a.base] {
			return refuse()
		}
		return nil
	case intRank[a.base] > 0 && (b.base == "FLOAT" || b.base == "DOUBLE"),
		a.base == "FLOAT" && b.base == "DOUBLE",
		isNumeric(a.base) && (b.base == "VARCHAR" || b.base == "STRING"),
		isChar(a.base) && (isNumeric(b.base) && b.base != "DECIMAL" || b.base == "DATE"),
		a.base == "DATE" && b.base == "DATETIME", a.base == "DATETIME" && b.base == "DATE",
		b.base == "STRING" && a.base != "DATE" && a.base != "DATETIME":
		return nil
	}
	return refuse()
}
