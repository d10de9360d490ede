package reconcile

import (
	"fmt"
	"strings"
	"unicode"
)

// Names of the helper columns reconcile's queries add; a user column may
// not start with reservedPrefix.
const (
	reservedPrefix = "__rc_"
	colDeleted     = "__rc_deleted"
	colVersion     = "__rc_version"
	colPresent     = "__rc_present"
)

// quote returns name as a backtick-quoted identifier. Names are checked by
// validName first; quote also doubles any backtick, as MySQL does.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// validName rejects identifiers reconcile will not put in SQL: empty, too
// long, or holding backticks or control characters.
func validName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%s: empty name", what)
	}
	if len(name) > 256 {
		return fmt.Errorf("%s %.20q…: longer than 256 bytes", what, name)
	}
	for _, r := range name {
		if r == '`' || unicode.IsControl(r) {
			return fmt.Errorf("%s %q: backticks and control characters are not allowed in names", what, name)
		}
	}
	return nil
}

// builder writes the reconcile queries of one spec (all names validated,
// columns resolved against the schemas).
type builder struct {
	audit, served string   // quoted db.table
	key           []string // key columns
	version       string
	compared      []string // columns both tables have (keys included)
	deleteWhen    string   // user predicate on the audit row, "" for none
	where         string   // user predicate on both tables, "" for none
}

func cols(prefix string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + quote(n)
	}
	return strings.Join(out, ", ")
}

// on is the join condition of two aliases on the key columns.
func (b *builder) on(l, r string) string {
	out := make([]string, len(b.key))
	for i, k := range b.key {
		out[i] = l + "." + quote(k) + " = " + r + "." + quote(k)
	}
	return strings.Join(out, " AND ")
}

func (b *builder) whereClause() string {
	if b.where == "" {
		return ""
	}
	return " WHERE (" + b.where + ")"
}

// auditCols are the audit columns the rebuild reads: keys, version and
// compared columns, each once.
func (b *builder) auditCols() []string {
	seen := map[string]bool{}
	var out []string
	for _, group := range [][]string{b.key, {b.version}, b.compared} {
		for _, c := range group {
			if !seen[strings.ToLower(c)] {
				seen[strings.ToLower(c)] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// rebuiltCols are the columns of a rebuilt row: keys and compared columns.
func (b *builder) rebuiltCols() []string {
	seen := map[string]bool{}
	var out []string
	for _, group := range [][]string{b.key, b.compared} {
		for _, c := range group {
			if !seen[strings.ToLower(c)] {
				seen[strings.ToLower(c)] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// auditRows is the audit table bounded by --where, with the delete flag.
func (b *builder) auditRows() string {
	del := "0"
	if b.deleteWhen != "" {
		del = "CASE WHEN (" + b.deleteWhen + ") THEN 1 ELSE 0 END"
	}
	return "SELECT " + cols("", b.auditCols()) + ", " + del + " AS " + colDeleted + " FROM " + b.audit + b.whereClause()
}

// maxVersions is each key's maximum version in the audit table.
func (b *builder) maxVersions() string {
	return "SELECT " + cols("", b.key) + ", MAX(" + quote(b.version) + ") AS " + colVersion +
		" FROM " + b.audit + b.whereClause() + " GROUP BY " + cols("", b.key)
}

// rebuilt is the distinct audit rows at each key's maximum version (one
// per key unless the maximum is tied between different values). Rows are
// joined on the version rather than picked with MAX_BY, which returns one
// of the tied rows arbitrarily and would hide the tie.
func (b *builder) rebuilt() string {
	return "SELECT DISTINCT " + cols("a.", b.rebuiltCols()) + ", a." + colDeleted +
		" FROM (" + b.auditRows() + ") a JOIN (" + b.maxVersions() + ") m ON " + b.on("a", "m") +
		" AND a." + quote(b.version) + " = m." + colVersion
}

// tied is the keys whose maximum version holds different values.
func (b *builder) tied() string {
	return "SELECT " + cols("", b.key) + ", 1 AS " + colPresent + " FROM (" + b.rebuilt() + ") r GROUP BY " +
		cols("", b.key) + " HAVING COUNT(*) > 1"
}

// settled is the rebuilt rows of the keys that are not tied.
func (b *builder) settled() string {
	return "SELECT r.* FROM (" + b.rebuilt() + ") r JOIN (SELECT " + cols("", b.key) + " FROM (" + b.rebuilt() +
		") r2 GROUP BY " + cols("", b.key) + " HAVING COUNT(*) = 1) u ON " + b.on("r", "u")
}

// servedRows is the served table bounded by --where.
func (b *builder) servedRows() string {
	return "SELECT " + cols("", b.rebuiltCols()) + ", 1 AS " + colPresent + " FROM " + b.served + b.whereClause()
}

// auditKeys is every key the audit table holds.
func (b *builder) auditKeys() string {
	return "SELECT DISTINCT " + cols("", b.key) + ", 1 AS " + colPresent + " FROM " + b.audit + b.whereClause()
}

// nullSafeEqual is l.c = r.c, NULL equal to NULL (written without <=> for
// engines that lack it).
func nullSafeEqual(l, r, c string) string {
	lc, rc := l+"."+quote(c), r+"."+quote(c)
	return "(" + lc + " = " + rc + " OR (" + lc + " IS NULL AND " + rc + " IS NULL))"
}

// mismatched is the served keys whose row differs from the rebuilt live
// row on a compared column.
func (b *builder) mismatched() string {
	var eq []string
	for _, c := range b.compared {
		if !b.isKey(c) {
			eq = append(eq, nullSafeEqual("s", "r", c))
		}
	}
	if len(eq) == 0 {
		eq = []string{"1 = 1"}
	}
	return "SELECT DISTINCT " + cols("s.", b.key) + " FROM (" + b.servedRows() + ") s JOIN (" + b.settled() + ") r ON " +
		b.on("s", "r") + " WHERE r." + colDeleted + " = 0 AND NOT (" + strings.Join(eq, " AND ") + ")"
}

// missing is the live rebuilt keys the served table lacks.
func (b *builder) missing() string {
	return "SELECT " + cols("r.", b.key) + " FROM (" + b.settled() + ") r LEFT JOIN (" + b.servedRows() + ") s ON " +
		b.on("r", "s") + " WHERE r." + colDeleted + " = 0 AND s." + colPresent + " IS NULL"
}

// resurrected is the served keys whose rebuilt row is a delete.
func (b *builder) resurrected() string {
	return "SELECT DISTINCT " + cols("s.", b.key) + " FROM (" + b.servedRows() + ") s JOIN (" + b.settled() + ") r ON " +
		b.on("s", "r") + " WHERE r." + colDeleted + " = 1"
}

// unaudited is the served keys the audit table does not hold.
func (b *builder) unaudited() string {
	return "SELECT DISTINCT " + cols("s.", b.key) + " FROM (" + b.servedRows() + ") s LEFT JOIN (" + b.auditKeys() + ") a ON " +
		b.on("s", "a") + " WHERE a." + colPresent + " IS NULL"
}

// duplicated is the keys the served table holds more than once.
func (b *builder) duplicated() string {
	return "SELECT " + cols("", b.key) + " FROM (" + b.servedRows() + ") s GROUP BY " + cols("", b.key) + " HAVING COUNT(*) > 1"
}

// duplicateEvents is the event identities (ids columns) the audit table
// holds more than once.
func (b *builder) duplicateEvents(ids []string) string {
	return "SELECT " + cols("", ids) + " FROM " + b.audit + b.whereClause() + " GROUP BY " + cols("", ids) + " HAVING COUNT(*) > 1"
}

// servedSum is SUM(c) over the served rows of keys that are not tied.
func (b *builder) servedSum(c string) string {
	return "SELECT SUM(s." + quote(c) + ") FROM (" + b.servedRows() + ") s LEFT JOIN (" + b.tied() + ") t ON " +
		b.on("s", "t") + " WHERE t." + colPresent + " IS NULL"
}

// rebuiltSum is SUM(c) over the live rebuilt rows of keys that are not
// tied.
func (b *builder) rebuiltSum(c string) string {
	return "SELECT SUM(r." + quote(c) + ") FROM (" + b.settled() + ") r WHERE r." + colDeleted + " = 0"
}

// rebuiltCounts is (live keys, deleted keys) of the settled rebuild.
func (b *builder) rebuiltCounts() string {
	return "SELECT COUNT(*), SUM(r." + colDeleted + ") FROM (" + b.settled() + ") r"
}

// count and sample wrap a key query: its row count, and its first rows
// ordered by the given columns.
func count(q string) string { return "SELECT COUNT(*) FROM (" + q + ") q" }

func sample(q string, by []string, n int) string {
	return "SELECT " + cols("q.", by) + " FROM (" + q + ") q ORDER BY " + cols("q.", by) + fmt.Sprintf(" LIMIT %d", n)
}

func (b *builder) isKey(c string) bool {
	for _, k := range b.key {
		if strings.EqualFold(k, c) {
			return true
		}
	}
	return false
}
