package mysqlfront

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// information_schema: SCHEMATA, TABLES, COLUMNS, KEY_COLUMN_USAGE, VIEWS,
// STATISTICS, ENGINES and PROCESSLIST, built from the Backend's
// catalog when a query reads them (they are tables of the SQL engine like any
// other, so WHERE, ORDER BY and joins work). Columns and values follow Doris
// (fe SchemaTable.java; be exec/schema_scanner/schema_columns_scanner.cpp for
// COLUMNS: DATA_TYPE is MySQL's name, LARGEINT "bigint unsigned", BOOLEAN
// "tinyint", STRING "varchar"; COLUMN_TYPE "int(11)", "varchar(32)",
// "decimalv3(12, 2)"), with what the Doris Flink connector's catalog and
// schema change and the Kafka connector query (DorisSystem.java,
// SchemaChangeHelper.java, DorisCatalog.java, DorisSystemService.java).

const infoSchemaDB = "information_schema"

// Catalog ids of the information_schema tables: negative, so never a
// Backend table's.
const (
	idSchemata int64 = -1 - iota
	idTables
	idColumns
	idKeyColumnUsage
	idViews
	idStatistics
	idEngines
	idProcesslist
)

func infoCols(t *schema.Table, spec string) *schema.Table {
	for _, f := range strings.Fields(spec) {
		name, typ, _ := strings.Cut(f, ":")
		t.Columns = append(t.Columns, schema.Column{Name: name, Type: typ, Nullable: true})
	}
	return t
}

var (
	schemataSchema = infoCols(&schema.Table{Name: "SCHEMATA"},
		"CATALOG_NAME:VARCHAR(512) SCHEMA_NAME:VARCHAR(32) DEFAULT_CHARACTER_SET_NAME:VARCHAR(32) "+
			"DEFAULT_COLLATION_NAME:VARCHAR(32) SQL_PATH:VARCHAR(512) DEFAULT_ENCRYPTION:VARCHAR(3)")
	tablesSchema = infoCols(&schema.Table{Name: "TABLES"},
		"TABLE_CATALOG:VARCHAR(512) TABLE_SCHEMA:VARCHAR(64) TABLE_NAME:VARCHAR(64) TABLE_TYPE:VARCHAR(64) "+
			"ENGINE:VARCHAR(64) VERSION:BIGINT ROW_FORMAT:VARCHAR(10) TABLE_ROWS:BIGINT AVG_ROW_LENGTH:BIGINT "+
			"DATA_LENGTH:BIGINT MAX_DATA_LENGTH:BIGINT INDEX_LENGTH:BIGINT DATA_FREE:BIGINT AUTO_INCREMENT:BIGINT "+
			"CREATE_TIME:DATETIME UPDATE_TIME:DATETIME CHECK_TIME:DATETIME TABLE_COLLATION:VARCHAR(32) "+
			"CHECKSUM:BIGINT CREATE_OPTIONS:VARCHAR(255) TABLE_COMMENT:VARCHAR(2048)")
	columnsSchema = infoCols(&schema.Table{Name: "COLUMNS"},
		"TABLE_CATALOG:VARCHAR(512) TABLE_SCHEMA:VARCHAR(64) TABLE_NAME:VARCHAR(64) COLUMN_NAME:VARCHAR(64) "+
			"ORDINAL_POSITION:BIGINT COLUMN_DEFAULT:VARCHAR(1024) IS_NULLABLE:VARCHAR(3) DATA_TYPE:VARCHAR(64) "+
			"CHARACTER_MAXIMUM_LENGTH:BIGINT CHARACTER_OCTET_LENGTH:BIGINT NUMERIC_PRECISION:BIGINT "+
			"NUMERIC_SCALE:BIGINT DATETIME_PRECISION:BIGINT CHARACTER_SET_NAME:VARCHAR(32) "+
			"COLLATION_NAME:VARCHAR(32) COLUMN_TYPE:VARCHAR(32) COLUMN_KEY:VARCHAR(3) EXTRA:VARCHAR(27) "+
			"PRIVILEGES:VARCHAR(80) COLUMN_COMMENT:VARCHAR(255) COLUMN_SIZE:BIGINT DECIMAL_DIGITS:BIGINT "+
			"GENERATION_EXPRESSION:VARCHAR(64) SRS_ID:BIGINT")
	// KEY_COLUMN_USAGE, VIEWS, STATISTICS and ENGINES have their columns
	// (fe SchemaTable.java) and no rows: the emulator has no foreign keys,
	// views or secondary indexes, and Doris's BE answers these tables with
	// its dummy scanner (be exec/schema_scanner.cpp: no scanner for them).
	keyColumnUsageSchema = infoCols(&schema.Table{Name: "KEY_COLUMN_USAGE"},
		"CONSTRAINT_CATALOG:VARCHAR(512) CONSTRAINT_SCHEMA:VARCHAR(64) CONSTRAINT_NAME:VARCHAR(64) "+
			"TABLE_CATALOG:VARCHAR(512) TABLE_SCHEMA:VARCHAR(64) TABLE_NAME:VARCHAR(64) COLUMN_NAME:VARCHAR(64) "+
			"ORDINAL_POSITION:BIGINT POSITION_IN_UNIQUE_CONSTRAINT:BIGINT REFERENCED_TABLE_SCHEMA:VARCHAR(64) "+
			"REFERENCED_TABLE_NAME:VARCHAR(64) REFERENCED_COLUMN_NAME:VARCHAR(64)")
	viewsSchema = infoCols(&schema.Table{Name: "VIEWS"},
		"TABLE_CATALOG:VARCHAR(512) TABLE_SCHEMA:VARCHAR(64) TABLE_NAME:VARCHAR(64) VIEW_DEFINITION:VARCHAR(8096) "+
			"CHECK_OPTION:VARCHAR(8) IS_UPDATABLE:VARCHAR(3) DEFINER:VARCHAR(77) SECURITY_TYPE:VARCHAR(7) "+
			"CHARACTER_SET_CLIENT:VARCHAR(32) COLLATION_CONNECTION:VARCHAR(32)")
	statisticsSchema = infoCols(&schema.Table{Name: "STATISTICS"},
		"TABLE_CATALOG:VARCHAR(512) TABLE_SCHEMA:VARCHAR(64) TABLE_NAME:VARCHAR(64) NON_UNIQUE:BIGINT "+
			"INDEX_SCHEMA:VARCHAR(64) INDEX_NAME:VARCHAR(64) SEQ_IN_INDEX:BIGINT COLUMN_NAME:VARCHAR(64) "+
			"COLLATION:VARCHAR(1) CARDINALITY:BIGINT SUB_PART:BIGINT PACKED:VARCHAR(10) NULLABLE:VARCHAR(3) "+
			"INDEX_TYPE:VARCHAR(16) COMMENT:VARCHAR(16)")
	enginesSchema = infoCols(&schema.Table{Name: "ENGINES"},
		"ENGINE:VARCHAR(64) SUPPORT:VARCHAR(8) COMMENT:VARCHAR(80) TRANSACTIONS:VARCHAR(3) XA:VARCHAR(3) SAVEPOINTS:VARCHAR(3)")
	// PROCESSLIST lists the connection that reads it (the emulator keeps no
	// registry of the others).
	processlistSchema = infoCols(&schema.Table{Name: "PROCESSLIST"},
		"CURRENT_CONNECTED:VARCHAR(16) ID:BIGINT USER:VARCHAR(32) HOST:VARCHAR(261) LOGIN_TIME:DATETIME "+
			"CATALOG:VARCHAR(64) DB:VARCHAR(64) COMMAND:VARCHAR(16) TIME:INT STATE:VARCHAR(64) "+
			"QUERY_ID:VARCHAR(256) INFO:VARCHAR(65533) FE:VARCHAR(64) CLOUD_CLUSTER:VARCHAR(64)")
)

// infoSchemaTableNames are the emulated information_schema tables.
var infoSchemaTableNames = []string{"COLUMNS", "ENGINES", "KEY_COLUMN_USAGE", "PROCESSLIST", "SCHEMATA", "STATISTICS", "TABLES", "VIEWS"}

// queryTables is the Backend's tables plus information_schema's.
func (ss *session) queryTables() []sqlexec.Table {
	b := ss.s.b
	out := b.QueryTables()
	lazy := func(build func() [][]any) func() (sqlexec.Rows, error) {
		return func() (sqlexec.Rows, error) { return sqlexec.SliceRows(build()), nil }
	}
	return append(out,
		sqlexec.Table{DB: infoSchemaDB, Name: "SCHEMATA", ID: idSchemata, Schema: schemataSchema, Snapshot: lazy(ss.schemataRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "TABLES", ID: idTables, Schema: tablesSchema, Snapshot: lazy(ss.tablesRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "COLUMNS", ID: idColumns, Schema: columnsSchema, Snapshot: lazy(ss.columnsRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "KEY_COLUMN_USAGE", ID: idKeyColumnUsage, Schema: keyColumnUsageSchema, Snapshot: lazy(noRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "VIEWS", ID: idViews, Schema: viewsSchema, Snapshot: lazy(noRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "STATISTICS", ID: idStatistics, Schema: statisticsSchema, Snapshot: lazy(noRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "ENGINES", ID: idEngines, Schema: enginesSchema, Snapshot: lazy(noRows)},
		sqlexec.Table{DB: infoSchemaDB, Name: "PROCESSLIST", ID: idProcesslist, Schema: processlistSchema, Snapshot: lazy(ss.processlistRows)},
	)
}

func noRows() [][]any { return nil }

// processlistRows is this connection's row of PROCESSLIST / SHOW
// PROCESSLIST.
func (ss *session) processlistRows() [][]any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var db any
	if ss.db != "" {
		db = ss.db
	}
	return [][]any{{"Yes", int64(ss.connID), ss.user, ss.host, ss.loginTime.Format(time.DateTime), "internal", db,
		"Query", int64(0), "OK", "", "", "127.0.0.1:9010", ""}}
}

func (ss *session) schemataRows() [][]any {
	var rows [][]any
	for _, db := range ss.databases() {
		rows = append(rows, []any{"internal", db, "utf8", "utf8_general_ci", nil, "NO"})
	}
	return rows
}

// userTables calls fn for every table of every Backend database.
func (ss *session) userTables(fn func(db string, t *schema.Table)) {
	b := ss.s.b
	for _, db := range b.Databases() {
		names, err := b.Tables(db)
		if err != nil {
			continue // dropped meanwhile
		}
		for _, n := range names {
			if t, err := b.Table(db, n); err == nil {
				fn(db, t)
			}
		}
	}
}

func (ss *session) tablesRows() [][]any {
	var rows [][]any
	for _, n := range infoSchemaTableNames {
		rows = append(rows, []any{"internal", infoSchemaDB, n, "SYSTEM VIEW", "SYSTEM VIEW", int64(0), "", int64(0),
			int64(0), int64(0), int64(0), int64(0), int64(0), nil, nil, nil, nil, "utf8_general_ci", nil, "", ""})
	}
	ss.userTables(func(db string, t *schema.Table) {
		rows = append(rows, []any{"internal", db, t.Name, "BASE TABLE", "Doris", nil, nil, nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, "utf-8", nil, "", t.Comment})
	})
	return rows
}

func (ss *session) columnsRows() [][]any {
	var rows [][]any
	ss.userTables(func(db string, t *schema.Table) {
		pos := int64(0)
		for _, c := range t.Columns {
			if isHiddenColumn(c.Name) {
				continue
			}
			pos++
			ct := columnTypeInfo(c.Type)
			null := "NO"
			if c.Nullable {
				null = "YES"
			}
			var def any
			if c.Default != nil {
				def = *c.Default
			}
			key := ""
			if slices.ContainsFunc(t.KeyColumns, func(k string) bool { return strings.EqualFold(k, c.Name) }) {
				key = keyLabel(t.Keys)
			}
			rows = append(rows, []any{"internal", db, t.Name, c.Name, pos, def, null, ct.dataType,
				ct.charLen, times4(ct.charLen), ct.precision, ct.scale, ct.dtPrecision, nil, nil, ct.columnType,
				key, "", "", c.Comment, ct.size, ct.digits, nil, nil})
		}
	})
	return rows
}

// keyLabel is COLUMN_KEY of a key column (fe FrontendServiceImpl
// describeTables: the keys type's MySQL-style label).
func keyLabel(k schema.KeysType) string {
	switch k {
	case schema.UniqueKeys:
		return "UNI"
	case schema.AggregateKeys:
		return "AGG"
	}
	return "DUP"
}

func times4(v any) any {
	if n, ok := v.(int64); ok {
		return n * 4
	}
	return nil
}

// typeInfo is what information_schema.COLUMNS says about a type.
type typeInfo struct {
	dataType, columnType                         string
	charLen, precision, scale, dtPrecision, size any // int64 or nil
	digits                                       any
}

// columnTypeInfo maps a Doris column type to COLUMNS' type columns
// (schema_columns_scanner.cpp _to_mysql_data_type_string / _type_to_string;
// COLUMN_SIZE is the length of strings and the precision of numbers).
func columnTypeInfo(typ string) typeInfo {
	t := strings.ToUpper(strings.TrimSpace(typ))
	base, args := t, []int64(nil)
	if i := strings.IndexByte(t, '('); i >= 0 && strings.HasSuffix(t, ")") {
		base = strings.TrimSpace(t[:i])
		for _, a := range strings.Split(t[i+1:len(t)-1], ",") {
			n, _ := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
			args = append(args, n)
		}
	}
	arg := func(i int, def int64) int64 {
		if i < len(args) {
			return args[i]
		}
		return def
	}
	num := func(dt, ct string, p int64) typeInfo {
		return typeInfo{dataType: dt, columnType: ct, precision: p, scale: int64(0), size: p, digits: int64(0)}
	}
	switch base {
	case "BOOLEAN", "BOOL":
		return typeInfo{dataType: "tinyint", columnType: "tinyint(1)", size: int64(0), digits: int64(0)}
	case "TINYINT":
		return num("tinyint", "tinyint(4)", 3)
	case "SMALLINT":
		return num("smallint", "smallint(6)", 5)
	case "INT", "INTEGER":
		return num("int", "int(11)", 10)
	case "BIGINT":
		return num("bigint", "bigint(20)", 19)
	case "LARGEINT":
		return num("bigint unsigned", "largeint", 39)
	case "FLOAT":
		return num("float", "float", 7)
	case "DOUBLE":
		return num("double", "double", 15)
	case "DECIMAL", "DECIMALV3", "DECIMALV2":
		p, s := arg(0, 9), arg(1, 0)
		ct := "decimalv3(" + strconv.FormatInt(p, 10) + ", " + strconv.FormatInt(s, 10) + ")"
		if base == "DECIMALV2" {
			ct = "decimal(" + strconv.FormatInt(p, 10) + ", " + strconv.FormatInt(s, 10) + ")"
		}
		return typeInfo{dataType: "decimal", columnType: ct, precision: p, scale: s, size: p, digits: s}
	case "CHAR":
		n := arg(0, 1)
		return typeInfo{dataType: "char", columnType: "char(" + strconv.FormatInt(n, 10) + ")", charLen: n, size: n}
	case "VARCHAR":
		n := arg(0, 65533)
		return typeInfo{dataType: "varchar", columnType: "varchar(" + strconv.FormatInt(n, 10) + ")", charLen: n, size: n}
	case "STRING", "TEXT":
		n := int64(2147483643)
		return typeInfo{dataType: "varchar", columnType: "string", charLen: n, size: n}
	case "DATE", "DATEV2":
		return typeInfo{dataType: "date", columnType: "date", size: int64(10)}
	case "DATETIME", "DATETIMEV2":
		s := arg(0, 0)
		ct := "datetime"
		if s > 0 {
			ct = "datetime(" + strconv.FormatInt(s, 10) + ")"
		}
		return typeInfo{dataType: "datetime", columnType: ct, dtPrecision: s, size: int64(19)}
	case "JSON", "JSONB":
		return typeInfo{dataType: "json", columnType: "json"}
	}
	lower := strings.ToLower(t)
	if i := strings.IndexAny(lower, "<("); i >= 0 {
		return typeInfo{dataType: lower[:i], columnType: lower}
	}
	return typeInfo{dataType: lower, columnType: lower}
}
