package mysqlfront

import (
	"slices"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// show routes SHOW statements.
func (ss *session) show(st stmt) (*resultSpec, error) {
	i := 1
	full := false
	if st.at(i).is("FULL") {
		i, full = i+1, true
	}
	if st.at(i).is("GLOBAL") || st.at(i).is("SESSION") {
		i++
	}
	switch w := strings.ToUpper(st.at(i).val); {
	case w == "DATABASES" || w == "SCHEMAS":
		return ss.showDatabases(st, i+1)
	case w == "TABLES":
		return ss.showTables(st, i+1, full)
	case w == "CREATE" && st.at(i+1).is("TABLE"):
		return ss.showCreateTable(st, i+2)
	case w == "COLUMNS" || w == "FIELDS":
		return ss.showColumns(st, i+1, full)
	case w == "TRANSACTION":
		return ss.showTransaction(st, i+1)
	case w == "FRONTEND" && st.at(i+1).is("CONFIG"):
		return ss.frontendConfig(st, i+2)
	case w == "VARIABLES":
		return ss.showVariables(st, i+1)
	case w == "WARNINGS" || w == "ERRORS":
		// Nothing is ever recorded.
		spec := stringCols("Level", "Code", "Message")
		return &spec, nil
	case w == "STATUS":
		spec := stringCols("Variable_name", "Value")
		return &spec, nil
	case w == "TABLE" && st.at(i+1).is("STATUS"):
		return ss.showTableStatus(st, i+2)
	case w == "INDEX" || w == "INDEXES" || w == "KEYS":
		return ss.showIndex(st, i+1)
	case w == "PARTITIONS":
		return ss.showPartitions(st, i+1)
	case w == "ALTER" && st.at(i+1).is("TABLE") && (st.at(i+2).is("COLUMN") || st.at(i+2).is("ROLLUP")):
		// ALTER TABLE runs synchronously in the emulator: no job is kept.
		spec := stringCols("JobId", "TableName", "CreateTime", "FinishTime", "IndexName", "IndexId",
			"OriginIndexId", "SchemaVersion", "TransactionId", "State", "Msg", "Progress", "Timeout")
		return &spec, nil
	case w == "PROCESSLIST":
		spec := stringCols("CurrentConnected", "Id", "User", "Host", "LoginTime", "Catalog", "Db", "Command",
			"Time", "State", "QueryId", "Info", "FE", "CloudCluster")
		for _, r := range ss.processlistRows() {
			row := make([]any, len(r))
			for k, v := range r {
				if v != nil {
					row[k], _ = textValue(0, v)
				}
			}
			spec.rows = append(spec.rows, row)
		}
		return &spec, nil
	}
	return nil, syntaxError(st)
}

// SHOW TABLE STATUS [FROM|IN db] [LIKE 'p'] (fe ShowTableStatusCommand):
// MySQL's 18 columns; Engine "Doris", Rows and lengths 0 (the emulator
// keeps no statistics), Collation utf8mb4_0900_bin.
func (ss *session) showTableStatus(st stmt, i int) (*resultSpec, error) {
	db, pat, has, err := ss.tablesIn(st, i)
	if err != nil {
		return nil, err
	}
	spec := stringCols("Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length",
		"Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time", "Update_time",
		"Check_time", "Collation", "Checksum", "Create_options", "Comment")
	if db == infoSchemaDB || db == "mysql" {
		return &spec, nil
	}
	names, err := ss.s.b.Tables(db)
	if err != nil {
		return nil, backendError(err)
	}
	names = slices.Sorted(slices.Values(names))
	for _, n := range names {
		if has && !likeMatch(pat, n) {
			continue
		}
		t, err := ss.s.b.Table(db, n)
		if err != nil {
			continue
		}
		spec.rows = append(spec.rows, []any{n, "Doris", nil, nil, "0", "0", "0", nil, nil, nil, nil, nil, nil,
			nil, "utf8mb4_0900_bin", nil, "", t.Comment})
	}
	return &spec, nil
}

// fromTable reads `FROM|IN [db.]t [FROM|IN db]` at i.
func (ss *session) fromTable(st stmt, i int) (string, *schema.Table, error) {
	if !st.at(i).is("FROM") && !st.at(i).is("IN") {
		return "", nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, i+1)
	if name.table == "" {
		return "", nil, syntaxError(st)
	}
	if st.at(n).is("FROM") || st.at(n).is("IN") {
		name.db = st.at(n + 1).name()
		n += 2
	}
	if n != len(st.toks) {
		return "", nil, syntaxError(st)
	}
	return ss.lookupTable(name)
}

// SHOW INDEX FROM t (fe ShowIndexCommand): one row per inverted, bitmap or
// ngram index; the emulator has none, so the answer is its columns and no
// rows.
func (ss *session) showIndex(st stmt, i int) (*resultSpec, error) {
	if _, _, err := ss.fromTable(st, i); err != nil {
		return nil, err
	}
	spec := stringCols("Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation",
		"Cardinality", "Sub_part", "Packed", "Null", "Index_type", "Comment", "Properties")
	return &spec, nil
}

// SHOW PARTITIONS FROM t (fe PartitionsProcDir): an unpartitioned table has
// one partition named after the table; the emulator's tables are all
// unpartitioned.
func (ss *session) showPartitions(st stmt, i int) (*resultSpec, error) {
	_, t, err := ss.fromTable(st, i)
	if err != nil {
		return nil, err
	}
	spec := stringCols("PartitionId", "PartitionName", "VisibleVersion", "VisibleVersionTime", "State",
		"PartitionKey", "Range", "DistributionKey", "Buckets", "ReplicationNum", "StorageMedium", "CooldownTime",
		"RemoteStoragePolicy", "LastConsistencyCheckTime", "DataSize", "IsInMemory", "ReplicaAllocation",
		"IsMutable", "SyncWithBaseTables", "UnsyncTables", "CommittedVersion", "RowCount")
	dist := "RANDOM"
	if len(t.DistributedBy) > 0 {
		dist = strings.Join(t.DistributedBy, ", ")
	}
	repl := t.Properties["replication_num"]
	if repl == "" {
		repl = "1"
	}
	spec.rows = [][]any{{"0", t.Name, "1", "", "NORMAL", "", "", dist, strconv.Itoa(t.Buckets), repl, "HDD",
		"9999-12-31 15:59:59", "", "\\N", "0.000 ", "false", "tag.location.default: " + repl, "true", "true", "\\N", "1", "0"}}
	return &spec, nil
}

// likeFilter reads an optional `LIKE 'pattern'` at i. ok is false on a
// syntax error.
func likeFilter(st stmt, i int) (pattern string, has, ok bool) {
	if i == len(st.toks) {
		return "", false, true
	}
	if st.at(i).is("LIKE") && st.at(i+1).kind == tokString && i+2 == len(st.toks) {
		return st.at(i + 1).val, true, true
	}
	return "", false, false
}

// SHOW DATABASES [LIKE 'p'] — one column, Database.
func (ss *session) showDatabases(st stmt, i int) (*resultSpec, error) {
	pat, has, ok := likeFilter(st, i)
	if !ok {
		return nil, syntaxError(st)
	}
	spec := stringCols("Database")
	for _, db := range ss.databases() {
		if !has || likeMatch(pat, db) {
			spec.rows = append(spec.rows, []any{db})
		}
	}
	return &spec, nil
}

// SHOW [FULL] TABLES [FROM|IN db] [LIKE 'p'] — Tables_in_<db> (and
// Table_type with FULL).
func (ss *session) showTables(st stmt, i int, full bool) (*resultSpec, error) {
	db, pat, has, err := ss.tablesIn(st, i)
	if err != nil {
		return nil, err
	}
	var names []string
	switch db {
	case infoSchemaDB:
		names = slices.Clone(infoSchemaTableNames)
	case "mysql":
	default:
		n, err := ss.s.b.Tables(db)
		if err != nil {
			return nil, backendError(err)
		}
		names = slices.Clone(n)
	}
	slices.Sort(names)
	spec := stringCols("Tables_in_" + db)
	if full {
		spec = stringCols("Tables_in_"+db, "Table_type")
	}
	for _, n := range names {
		if has && !likeMatch(pat, n) {
			continue
		}
		if full {
			spec.rows = append(spec.rows, []any{n, "BASE TABLE"})
		} else {
			spec.rows = append(spec.rows, []any{n})
		}
	}
	return &spec, nil
}

// lookupTable resolves [db.]t and fetches its schema.
func (ss *session) lookupTable(name objName) (string, *schema.Table, error) {
	db, err := ss.resolveDB(name.db)
	if err != nil {
		return "", nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return "", nil, err
	}
	t, err := ss.s.b.Table(db, name.table)
	if err != nil {
		return "", nil, backendError(err)
	}
	return db, t, nil
}

// SHOW CREATE TABLE [db.]t — columns Table, Create Table.
func (ss *session) showCreateTable(st stmt, i int) (*resultSpec, error) {
	name, n := qualifiedName(st.toks, i)
	if name.table == "" || n != len(st.toks) {
		return nil, syntaxError(st)
	}
	_, t, err := ss.lookupTable(name)
	if err != nil {
		return nil, err
	}
	ddl := t.CreateTableSQL()
	spec := stringCols("Table", "Create Table")
	spec.rows = [][]any{{name.table, ddl}}
	return &spec, nil
}

// DESC|DESCRIBE [db.]t [ALL] — Field, Type, Null, Key, Default, Extra.
func (ss *session) describe(st stmt, i int) (*resultSpec, error) {
	name, n := qualifiedName(st.toks, i)
	if n < len(st.toks) && st.at(n).is("ALL") {
		n++
	}
	if name.table == "" || n != len(st.toks) {
		return nil, syntaxError(st)
	}
	_, t, err := ss.lookupTable(name)
	if err != nil {
		return nil, err
	}
	return describeTable(t), nil
}

// SHOW [FULL] COLUMNS|FIELDS FROM|IN [db.]t [FROM|IN db] — answered like
// DESC; FULL adds Collation, Privileges and Comment in MySQL's order (Field,
// Type, Collation, Null, Key, Default, Extra, Privileges, Comment; fe
// ShowColumnsCommand), which the Flink connector's schema change reads.
func (ss *session) showColumns(st stmt, i int, full bool) (*resultSpec, error) {
	if !st.at(i).is("FROM") && !st.at(i).is("IN") {
		return nil, syntaxError(st)
	}
	name, n := qualifiedName(st.toks, i+1)
	if name.table == "" {
		return nil, syntaxError(st)
	}
	if st.at(n).is("FROM") || st.at(n).is("IN") {
		name.db = st.at(n + 1).name()
		if name.db == "" {
			return nil, syntaxError(st)
		}
		n += 2
	}
	if n != len(st.toks) {
		return nil, syntaxError(st)
	}
	_, t, err := ss.lookupTable(name)
	if err != nil {
		return nil, err
	}
	return showColumnsOf(t, full), nil
}

// showColumnsOf is SHOW [FULL] COLUMNS (fe ShowColumnsCommand, which reads
// information_schema.columns): DESC's Field, Type, Null, Default and Extra,
// but Key is YES/NO (DESC says true/false); FULL adds Collation "",
// Privileges "" and Comment.
func showColumnsOf(t *schema.Table, full bool) *resultSpec {
	d := describeTable(t)
	spec := stringCols("Field", "Type", "Null", "Key", "Default", "Extra")
	if full {
		spec = stringCols("Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment")
	}
	i := 0
	for _, c := range t.Columns {
		if isHiddenColumn(c.Name) {
			continue
		}
		r := d.rows[i]
		i++
		key := "NO"
		if r[3] == "true" {
			key = "YES"
		}
		if full {
			spec.rows = append(spec.rows, []any{r[0], r[1], "", r[2], key, r[4], r[5], "", c.Comment})
		} else {
			spec.rows = append(spec.rows, []any{r[0], r[1], r[2], key, r[4], r[5]})
		}
	}
	return &spec
}

// describeTable follows Doris's IndexSchemaProcNode (DESC of an OLAP table):
// Type is lower-case, Null is YES/NO, Key is true/false, Default is NULL when
// absent, Extra is the aggregation of an AGGREGATE KEY value column (hidden
// for other models). Hidden __DORIS_*__ columns are not shown.
func describeTable(t *schema.Table) *resultSpec {
	spec := stringCols("Field", "Type", "Null", "Key", "Default", "Extra")
	keys := make(map[string]bool, len(t.KeyColumns))
	for _, k := range t.KeyColumns {
		keys[strings.ToLower(k)] = true
	}
	for _, c := range t.Columns {
		if isHiddenColumn(c.Name) {
			continue
		}
		null := "NO"
		if c.Nullable {
			null = "YES"
		}
		isKey := "false"
		if keys[strings.ToLower(c.Name)] {
			isKey = "true"
		}
		var def any
		if c.Default != nil {
			def = *c.Default
		}
		extra := ""
		if t.Keys == schema.AggregateKeys && c.Agg != schema.AggNone {
			extra = string(c.Agg)
		}
		spec.rows = append(spec.rows, []any{c.Name, strings.ToLower(c.Type), null, isKey, def, extra})
	}
	return &spec
}

// tablesIn parses the `[FROM|IN db] [LIKE 'p']` tail of a SHOW that lists
// tables, starting at token i: the database (the session's when none is
// named; it must exist) and the LIKE pattern, if has.
func (ss *session) tablesIn(st stmt, i int) (db, pat string, has bool, err error) {
	explicit := ""
	if st.at(i).is("FROM") || st.at(i).is("IN") {
		explicit = st.at(i + 1).name()
		if explicit == "" {
			return "", "", false, syntaxError(st)
		}
		i += 2
	}
	pat, has, ok := likeFilter(st, i)
	if !ok {
		return "", "", false, syntaxError(st)
	}
	if db, err = ss.resolveDB(explicit); err != nil {
		return "", "", false, err
	}
	if err := ss.knownDB(db); err != nil {
		return "", "", false, err
	}
	return db, pat, has, nil
}
