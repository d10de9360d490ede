// Package reconcile implements `doris-sink reconcile`: the business layer
// of exactly-once. It rebuilds the state a served table should hold from
// an append-only audit table (the row of maximum version per key, deleted
// keys absent) and compares the two in Doris, with SQL (GROUP BY, JOIN),
// so the work scales with the cluster, not with this process.
package reconcile

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// SampleKeys is how many keys a finding lists (its count is exact).
const SampleKeys = 20

// DefaultQueryTimeout bounds each of reconcile's queries (Doris's
// query_timeout session variable, in seconds).
const DefaultQueryTimeout = 10 * time.Minute

// Finding kinds, stable for `-o json`.
const (
	// KindMismatched: the served row differs from the audit's row of
	// maximum version on a compared column.
	KindMismatched = "mismatched"
	// KindMissing: a key whose latest audit row is not a delete is not
	// served.
	KindMissing = "missing"
	// KindResurrected: a key whose latest audit row is a delete is served.
	KindResurrected = "resurrected"
	// KindUnaudited: a served key has no row in the audit table.
	KindUnaudited = "not-in-audit"
	// KindDuplicateKey: the served table (Duplicate model) holds a key
	// more than once.
	KindDuplicateKey = "duplicate-key"
	// KindTiedVersion: a key's maximum version is held by audit rows with
	// different values.
	KindTiedVersion = "tied-version"
	// KindDuplicateEvent: an event identity (--event-id) appears more than
	// once in the audit table.
	KindDuplicateEvent = "duplicate-event"
)

// Table names one table.
type Table struct {
	DB, Name string
}

// String is db.table.
func (t Table) String() string { return t.DB + "." + t.Name }

// ParseTable reads "db.table" or "table" (in defaultDB).
func ParseTable(s, defaultDB string) (Table, error) {
	db, name, ok := strings.Cut(s, ".")
	if !ok {
		db, name = defaultDB, s
	}
	if err := validName("database of "+s, db); err != nil {
		return Table{}, err
	}
	if err := validName("table", name); err != nil {
		return Table{}, err
	}
	return Table{DB: db, Name: name}, nil
}

// Spec says what to reconcile.
type Spec struct {
	// Audit is the append-only (Duplicate model) table of every event.
	Audit Table
	// Served is the table readers see (Unique model, usually).
	Served Table
	// Key is the business key, one or more columns of both tables.
	Key []string
	// Version orders a key's events in the audit table: the row of
	// maximum version is the state.
	Version string
	// DeleteWhen is a SQL predicate on an audit row saying it deletes its
	// key ("status = 'DELETED'"); "" when the stream has no deletes. Passed
	// to Doris as written.
	DeleteWhen string
	// Where is a SQL predicate bounding both tables (e.g. a date range);
	// "" for all rows. Passed to Doris as written.
	Where string
	// Sums are columns of both tables whose totals are compared.
	Sums []string
	// EventID are audit columns identifying one source event (e.g. the
	// partition and offset columns of records.metadata_columns): no value
	// may appear twice. Empty: not checked.
	EventID []string
	// QueryTimeout bounds each query (SET query_timeout); <= 0:
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Evidence links the audit table to its job's decisions
	// (ReadEvidence); nil: not checked. Where must be empty with it.
	Evidence *Evidence
	// AuditJob names the job of Evidence.
	AuditJob string
}

// Check is one finding's result: a count and the first keys.
type Check struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Count is how many keys (or event ids) the finding holds; 0: agrees.
	Count int64 `json:"count"`
	// Columns name the values of each entry of Keys.
	Columns []string `json:"columns"`
	// Keys are the first SampleKeys keys, in key order.
	Keys [][]string `json:"keys"`
	// Skipped says why the check did not run ("" when it ran).
	Skipped string `json:"skipped,omitempty"`
}

// Sum compares one column's totals.
type Sum struct {
	Column string `json:"column"`
	// Served is SUM(column) of the served table, Rebuilt of the rebuilt
	// state (deleted keys excluded); tied keys are left out of both. ""
	// when there are no rows.
	Served  string `json:"served"`
	Rebuilt string `json:"rebuilt"`
	Equal   bool   `json:"equal"`
}

// Report is the result of Reconcile.
type Report struct {
	Audit  string   `json:"audit"`
	Served string   `json:"served"`
	Key    []string `json:"key"`
	// Version is the audit's version column.
	Version string `json:"version"`
	// ServedModel is the served table's key model.
	ServedModel string `json:"served_model"`
	// SequenceColumn is the served table's function_column.sequence_col
	// ("" when it has none).
	SequenceColumn string `json:"sequence_column"`
	// Compared are the columns both tables have, compared row by row.
	Compared []string `json:"compared_columns"`
	// ServedRows is the served table's rows within --where.
	ServedRows int64 `json:"served_rows"`
	// LiveKeys and DeletedKeys count the rebuilt state's keys (tied keys
	// excluded).
	LiveKeys    int64 `json:"rebuilt_live_keys"`
	DeletedKeys int64 `json:"rebuilt_deleted_keys"`
	// Checks are every finding's result, agreeing ones included.
	Checks []Check `json:"checks"`
	Sums   []Sum   `json:"sums"`
	// AuditLink compares the audit table with the audit job's decisions
	// (--audit-job); nil without it.
	AuditLink *AuditLink `json:"audit_link,omitempty"`
	// Notes explain likely causes and skipped checks.
	Notes []string `json:"notes"`
}

// Mismatches is the number of checks and sums that disagree.
func (r *Report) Mismatches() int {
	n := 0
	for _, c := range r.Checks {
		if c.Count > 0 {
			n++
		}
	}
	for _, s := range r.Sums {
		if !s.Equal {
			n++
		}
	}
	if r.AuditLink != nil && !r.AuditLink.Equal {
		n++
	}
	return n
}

// Check returns the check of kind, or nil.
func (r *Report) Check(kind string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Kind == kind {
			return &r.Checks[i]
		}
	}
	return nil
}

// Querier runs reconcile's SQL: doris.Session.
type Querier interface {
	Exec(ctx context.Context, stmt string) error
	Query(ctx context.Context, q string) ([]string, [][]string, error)
}

// Run opens a session on c (reads wait QueryTimeout plus a margin), sets
// query_timeout and reconciles.
func Run(ctx context.Context, c *doris.Client, spec Spec) (*Report, error) {
	if spec.QueryTimeout <= 0 {
		spec.QueryTimeout = DefaultQueryTimeout
	}
	audit, err := c.ShowCreateTable(ctx, spec.Audit.DB, spec.Audit.Name)
	if err != nil {
		return nil, fmt.Errorf("reconcile: audit table: %w", err)
	}
	served, err := c.ShowCreateTable(ctx, spec.Served.DB, spec.Served.Name)
	if err != nil {
		return nil, fmt.Errorf("reconcile: served table: %w", err)
	}
	s, err := c.Session(ctx, spec.QueryTimeout+30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	defer s.Close()
	secs := int64(spec.QueryTimeout.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	if err := s.Exec(ctx, fmt.Sprintf("SET query_timeout = %d", secs)); err != nil {
		return nil, fmt.Errorf("reconcile: set query_timeout: %w", err)
	}
	return Reconcile(ctx, s, spec, audit, served)
}

// Reconcile compares served with the state rebuilt from audit (their
// schemas as SHOW CREATE TABLE gives them) by running queries on q.
func Reconcile(ctx context.Context, q Querier, spec Spec, audit, served *schema.Table) (*Report, error) {
	b, err := plan(spec, audit, served)
	if err != nil {
		return nil, err
	}
	rep := &Report{Audit: spec.Audit.String(), Served: spec.Served.String(), Key: spec.Key, Version: spec.Version,
		ServedModel: string(served.Keys), SequenceColumn: served.Properties["function_column.sequence_col"],
		Compared: b.compared, Checks: []Check{}, Sums: []Sum{}, Notes: []string{}}
	run := &runner{ctx: ctx, q: q}
	rep.ServedRows = run.int(count(b.servedRows()))
	if row := run.row(b.rebuiltCounts()); row != nil {
		all, _ := strconv.ParseInt(row[0], 10, 64)
		rep.DeletedKeys, _ = strconv.ParseInt(row[1], 10, 64)
		rep.LiveKeys = all - rep.DeletedKeys
	}
	keyCheck := func(kind, query string, by []string) { keyCheck(run, rep, kind, query, by) }
	keyCheck(KindMismatched, b.mismatched(), spec.Key)
	keyCheck(KindMissing, b.missing(), spec.Key)
	if spec.DeleteWhen != "" {
		keyCheck(KindResurrected, b.resurrected(), spec.Key)
	} else {
		rep.Checks = append(rep.Checks, Check{Kind: KindResurrected, Columns: spec.Key, Keys: [][]string{},
			Skipped: "no --delete-when: the audit's rows are never deletes"})
	}
	keyCheck(KindUnaudited, b.unaudited(), spec.Key)
	if served.Keys == schema.DuplicateKeys {
		keyCheck(KindDuplicateKey, b.duplicated(), spec.Key)
	} else {
		rep.Checks = append(rep.Checks, Check{Kind: KindDuplicateKey, Columns: spec.Key, Keys: [][]string{},
			Skipped: fmt.Sprintf("a %s KEY table holds each key once", served.Keys)})
	}
	keyCheck(KindTiedVersion, b.tied(), spec.Key)
	if len(spec.EventID) > 0 {
		keyCheck(KindDuplicateEvent, b.duplicateEvents(spec.EventID), spec.EventID)
	}
	for _, c := range spec.Sums {
		sv, rb := run.str(b.servedSum(c)), run.str(b.rebuiltSum(c))
		rep.Sums = append(rep.Sums, Sum{Column: c, Served: sv, Rebuilt: rb, Equal: sameNumber(sv, rb)})
	}
	if spec.Evidence != nil {
		linkAudit(run, b, spec.AuditJob, spec.Evidence, rep)
	}
	if run.err != nil {
		return nil, run.err
	}
	rep.Notes = notes(rep, b)
	return rep, nil
}

// keyCheck runs a key query: its count, and its first SampleKeys rows.
func keyCheck(run *runner, rep *Report, kind, query string, by []string) {
	c := Check{Kind: kind, Columns: by, Keys: [][]string{}}
	c.Count = run.int(count(query))
	if c.Count > 0 {
		c.Keys = run.rows(sample(query, by, SampleKeys))
	}
	rep.Checks = append(rep.Checks, c)
}

// plan validates spec against the two schemas and returns its builder.
func plan(spec Spec, audit, served *schema.Table) (*builder, error) {
	if len(spec.Key) == 0 {
		return nil, fmt.Errorf("reconcile: no --key")
	}
	if spec.Version == "" {
		return nil, fmt.Errorf("reconcile: no --version")
	}
	has := func(t *schema.Table, c string) string {
		for _, col := range t.Columns {
			if strings.EqualFold(col.Name, c) {
				return col.Name
			}
		}
		return ""
	}
	need := func(what, c string, ts ...*schema.Table) error {
		if err := validName(what, c); err != nil {
			return err
		}
		if strings.HasPrefix(strings.ToLower(c), reservedPrefix) {
			return fmt.Errorf("%s %q: names starting with %s are reserved by reconcile", what, c, reservedPrefix)
		}
		for _, t := range ts {
			if has(t, c) == "" {
				return fmt.Errorf("%s %q: no such column in %s.%s", what, c, t.Database, t.Name)
			}
		}
		return nil
	}
	for _, k := range spec.Key {
		if err := need("--key", k, audit, served); err != nil {
			return nil, err
		}
	}
	if err := need("--version", spec.Version, audit); err != nil {
		return nil, err
	}
	for _, c := range spec.Sums {
		if err := need("--sum", c, audit, served); err != nil {
			return nil, err
		}
	}
	for _, c := range spec.EventID {
		if err := need("--event-id", c, audit); err != nil {
			return nil, err
		}
	}
	if ev := spec.Evidence; ev != nil {
		if strings.TrimSpace(spec.Where) != "" {
			return nil, fmt.Errorf("reconcile: --where and --audit-job together: the audit job's counts cover the whole table")
		}
		for _, c := range []string{ev.Topic, ev.Partition, ev.Offset} {
			if c == "" {
				continue
			}
			if err := need("records.metadata_columns of the audit job", c, audit); err != nil {
				return nil, err
			}
		}
	}
	b := &builder{audit: quote(spec.Audit.DB) + "." + quote(spec.Audit.Name), served: quote(spec.Served.DB) + "." + quote(spec.Served.Name),
		key: spec.Key, version: spec.Version, deleteWhen: strings.TrimSpace(spec.DeleteWhen), where: strings.TrimSpace(spec.Where)}
	for _, col := range audit.Columns {
		if has(served, col.Name) == "" {
			continue
		}
		if err := need("shared column", col.Name); err != nil {
			return nil, err
		}
		b.compared = append(b.compared, col.Name)
	}
	return b, nil
}

// notes explain the findings' usual causes (docs/operations.md).
func notes(rep *Report, b *builder) []string {
	out := []string{}
	bad := func(kind string) bool { c := rep.Check(kind); return c != nil && c.Count > 0 }
	if rep.ServedModel == string(schema.UniqueKeys) && rep.SequenceColumn == "" && (bad(KindMismatched) || bad(KindResurrected)) {
		out = append(out, fmt.Sprintf("%s has no sequence column (function_column.sequence_col): a late, older event overwrites a newer one; "+
			"recreate it with \"function_column.sequence_col\" = %q", rep.Served, rep.Version))
	}
	if bad(KindResurrected) {
		out = append(out, "deleted keys are served: deletes are not synced to the served table (no __DORIS_DELETE_SIGN__ mapped, "+
			"or a late event after the delete with no sequence column)")
	}
	if bad(KindUnaudited) {
		out = append(out, "served keys absent from the audit: a second writer loads the served table, or --where bounds the two tables differently")
	}
	if bad(KindTiedVersion) {
		out = append(out, "tied versions: two different events carry the same version; the served row is whichever loaded last")
	}
	if !slicesContainFold(b.compared, rep.Version) {
		out = append(out, fmt.Sprintf("the served table has no %s column: rows are compared on %s only", rep.Version, strings.Join(b.compared, ", ")))
	}
	return out
}

func slicesContainFold(s []string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// sameNumber compares two SUM results as numbers (DECIMAL scales may be
// printed differently), as text when either is not a number.
func sameNumber(a, b string) bool {
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	if okx && oky {
		return x.Cmp(y) == 0
	}
	return a == b
}

// runner runs queries and keeps the first error.
type runner struct {
	ctx context.Context
	q   Querier
	err error
}

func (r *runner) rows(q string) [][]string {
	if r.err != nil {
		return nil
	}
	_, rows, err := r.q.Query(r.ctx, q)
	if err != nil {
		r.err = fmt.Errorf("reconcile: %w\nquery: %s", err, q)
		return nil
	}
	if rows == nil {
		rows = [][]string{}
	}
	return rows
}

func (r *runner) row(q string) []string {
	rows := r.rows(q)
	if r.err != nil {
		return nil
	}
	if len(rows) != 1 || len(rows[0]) == 0 {
		r.err = fmt.Errorf("reconcile: want one row, got %d\nquery: %s", len(rows), q)
		return nil
	}
	return rows[0]
}

func (r *runner) str(q string) string {
	if row := r.row(q); row != nil {
		return row[0]
	}
	return ""
}

func (r *runner) int(q string) int64 {
	s := r.str(q)
	if r.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.err = fmt.Errorf("reconcile: want a count, got %q\nquery: %s", s, q)
	}
	return n
}
