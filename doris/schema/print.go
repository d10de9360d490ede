package schema

import (
	"sort"
	"strconv"
	"strings"
)

// CreateTableSQL returns the DDL of t in the form Doris's SHOW CREATE TABLE
// prints it (Doris 2.x: FE Env.getDdlStmt / Column.toSql):
//
//	CREATE TABLE `order_state_eos` (
//	  `order_id` bigint NULL,
//	  `amount` decimal(12,2) NULL DEFAULT "0" COMMENT 'x'
//	) ENGINE=OLAP
//	UNIQUE KEY(`order_id`)
//	COMMENT 'OLAP'
//	DISTRIBUTED BY HASH(`order_id`) BUCKETS 4
//	PROPERTIES (
//	"enable_unique_key_merge_on_write" = "true"
//	);
//
// Types print in lower case, aggregations in upper case, properties sorted
// by key. Differences from Doris: the table name is qualified (`db`.`t`)
// when t.Database is set (clear it for Doris's exact text); partitions,
// indexes and rollups are not printed (not modelled); Doris prints its own
// default properties, here only t.Properties appear. ParseCreateTable of
// the result equals t for every t ParseCreateTable returns.
func (t *Table) CreateTableSQL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	if t.Database != "" {
		b.WriteString(quoteIdent(t.Database) + ".")
	}
	b.WriteString(quoteIdent(t.Name) + " (\n")
	for i, c := range t.Columns {
		b.WriteString("  " + columnSQL(c))
		if i < len(t.Columns)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(") ENGINE=OLAP\n")
	if len(t.KeyColumns) > 0 {
		b.WriteString(string(t.Keys) + " KEY(" + identList(t.KeyColumns) + ")\n")
	}
	comment := t.Comment
	if comment == "" {
		comment = TypeCommentOLAP
	}
	b.WriteString("COMMENT " + quoteString(comment, '\'') + "\n")
	if len(t.DistributedBy) > 0 {
		b.WriteString("DISTRIBUTED BY HASH(" + identList(t.DistributedBy) + ")")
	} else {
		b.WriteString("DISTRIBUTED BY RANDOM")
	}
	if t.Buckets > 0 {
		b.WriteString(" BUCKETS " + strconv.Itoa(t.Buckets) + "\n")
	} else {
		b.WriteString(" BUCKETS AUTO\n")
	}
	if len(t.Properties) > 0 {
		keys := make([]string, 0, len(t.Properties))
		for k := range t.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("PROPERTIES (\n")
		for i, k := range keys {
			b.WriteString(quoteString(k, '"') + " = " + quoteString(t.Properties[k], '"'))
			if i < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(")")
	}
	b.WriteString(";")
	return b.String()
}

// columnSQL renders one column as Column.toSql does.
func columnSQL(c Column) string {
	var b strings.Builder
	b.WriteString(quoteIdent(c.Name) + " ")
	if typ, ok := parseTypeString(c.Type); ok {
		b.WriteString(typ.format(true))
	} else {
		b.WriteString(c.Type)
	}
	if c.Agg != AggNone {
		b.WriteString(" " + string(c.Agg))
	}
	if c.Nullable {
		b.WriteString(" NULL")
	} else {
		b.WriteString(" NOT NULL")
	}
	if c.Default != nil {
		if c.DefaultExpr {
			b.WriteString(" DEFAULT " + *c.Default)
		} else {
			b.WriteString(" DEFAULT " + quoteString(*c.Default, '"'))
		}
	}
	if c.Comment != "" {
		b.WriteString(" COMMENT " + quoteString(c.Comment, '\''))
	}
	return b.String()
}

func identList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}
