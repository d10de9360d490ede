package doristest

import (
	"strings"
	"testing"
)

// DELETE FROM … WHERE on Duplicate, Unique and Aggregate tables, with the
// predicate rules of fe DeleteFromCommand.java: Duplicate / Aggregate take
// AND-ed simple predicates (Aggregate on keys only, no float column); Unique
// (merge-on-write) takes general predicates (DeleteFromUsingCommand).
func TestDeleteFrom(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, ddl := range []string{
		"CREATE TABLE kv (k BIGINT, v VARCHAR(8), f DOUBLE) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
		"CREATE TABLE agg (k BIGINT, n BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
		"CREATE TABLE dupf (k BIGINT, f DOUBLE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
	} {
		if err := s.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	db := openMySQL(t, s)
	load(t, s, "orders", "1\ta\n2\tb\n3\tc\n4\t\\N\n", hdr{"label": "o"})
	load(t, s, "kv", "1\ta\t1.5\n2\tb\t2.5\n3\tc\t3.5\n", hdr{"label": "k"})
	load(t, s, "agg", "1\t10\n2\t20\n", hdr{"label": "a"})

	// Duplicate: simple predicates on any column, joined by AND.
	mustExec(t, db, "DELETE FROM orders WHERE id >= 2 AND v IN ('b', 'c')", "DELETE FROM demo.orders WHERE v IS NULL")
	wantEq(t, "orders", strings.Join(queryStrings(t, db, "SELECT id FROM orders ORDER BY id"), ","), "1")
	// Unique: general predicates, OR and functions included.
	mustExec(t, db, "DELETE FROM kv WHERE k = 1 OR upper(v) = 'C'")
	wantEq(t, "kv", strings.Join(queryStrings(t, db, "SELECT k FROM kv ORDER BY k"), ","), "2")
	// A deleted key comes back with a new load.
	load(t, s, "kv", "1\tz\t0\n", hdr{"label": "k2"})
	wantEq(t, "kv after reload", strings.Join(queryStrings(t, db, "SELECT k FROM kv ORDER BY k"), ","), "1,2")
	mustExec(t, db, "DELETE FROM agg WHERE k = 1")
	wantEq(t, "agg", strings.Join(queryStrings(t, db, "SELECT k, n FROM agg"), ","), "2|20")

	for q, msg := range map[string]string{
		"DELETE FROM orders WHERE id = 1 OR id = 2": "Where clause only supports compound predicate, binary predicate, is_null predicate or in predicate. But we meet id = 1 OR id = 2",
		"DELETE FROM orders WHERE id + 1 = 2":       "Left expr of binary predicate should be column name, predicate: id + 1 = 2",
		"DELETE FROM orders WHERE id = id":          "Right expr of binary predicate should be value, predicate: id = id",
		"DELETE FROM dupf WHERE f = 1":              "Column[f] type is float or double.",
		"DELETE FROM agg WHERE n = 20":              "delete predicate on value column only supports Unique table with merge-on-write enabled and Duplicate table, but Table[agg] is an Aggregate table.",
		"DELETE FROM orders":                        "delete command must contain filter",
		"DELETE FROM orders WHERE nope = 1":         "Unknown column 'nope' in 'table list'",
	} {
		_, err := db.Exec(q)
		wantDDLError(t, err, msg)
	}
	// Nothing above removed a row.
	wantEq(t, "orders count", count(t, db, "orders"), 1)
	wantEq(t, "agg count", count(t, db, "agg"), 1)
}

// On a Unique table with a sequence column a DELETE leaves the key's
// sequence behind, as Doris's delete-sign row does (DeleteFromUsingCommand
// loads the row's sequence value with __DORIS_DELETE_SIGN__ = 1): a later
// load with a lower sequence does not bring the key back, a higher one does
// (docs/doris-facts.md §7).
func TestDeleteFromKeepsSequence(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, `CREATE TABLE seq (k BIGINT, ver BIGINT, v VARCHAR(8)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("function_column.sequence_col" = "ver")`); err != nil {
		t.Fatal(err)
	}
	db := openMySQL(t, s)
	load(t, s, "seq", "1\t5\ta\n", hdr{"label": "s1"})
	mustExec(t, db, "DELETE FROM seq WHERE k = 1")
	load(t, s, "seq", "1\t4\told\n", hdr{"label": "s2"})
	wantEq(t, "count after a lower-sequence load", count(t, db, "seq"), 0)
	load(t, s, "seq", "1\t6\tnew\n", hdr{"label": "s3"})
	wantEq(t, "row after a higher-sequence load", strings.Join(queryStrings(t, db, "SELECT v FROM seq"), ","), "new")
}
