// Package table is the emulator's storage for one Doris table: it parses a
// Stream Load body (CSV or JSON) into typed rows under the load's headers,
// counts total / filtered / unselected rows the way a Doris BE does, and
// applies committed batches with the table's data model (DUPLICATE, UNIQUE
// merge-on-write with sequence column and delete sign, AGGREGATE).
//
// A Table is safe for concurrent use.
package table

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// LoadSpec is the part of a Stream Load request that shapes the data: the
// headers of docs/doris-facts.md §1.4 that concern parsing, mapping, filtering and
// the delete sign.
type LoadSpec struct {
	Format           string // "csv" (default), "csv_with_names", "csv_with_names_and_types", "json"
	ColumnSeparator  string // default "\t"
	LineDelimiter    string // default "\n"
	Enclose, Escape  string
	TrimDoubleQuotes bool
	SkipLines        int
	Columns          string // raw `columns` header
	Where            string // raw `where` header
	StripOuterArray  bool
	ReadJSONByLine   bool
	JSONPaths        string
	JSONRoot         string
	StrictMode       bool
	MergeType        string // APPEND (default), DELETE, MERGE
	Delete           string // `delete` predicate for MERGE
	SequenceCol      string // `function_column.sequence_col` header
	HiddenColumns    []string
	PartialColumns   bool
	MaxFilterRatio   float64
	NumAsString      bool
	FuzzyParse       bool
}

// Batch is a parsed load, staged until its transaction commits.
type Batch struct {
	TotalRows      int64
	FilteredRows   int64 // rows rejected by conversion / quality rules
	UnselectedRows int64 // rows removed by `where`
	LoadBytes      int64
	// ErrorLines describe filtered rows, one line each, for the BE's
	// _load_error_log (bounded in count).
	ErrorLines []string
	// FirstErrorMsg is set when the load fails in execution (docs/doris-facts.md §2.1 #20).
	FirstErrorMsg string

	meta *tableMeta // the schema the batch was prepared under
	// dup holds the staged rows, encoded: plain rows for DUPLICATE,
	// staged records (encodeStaged) for UNIQUE / AGGREGATE.
	dup      rowStore
	scratch  []byte
	counting bool
	partial  []bool // loaded columns of a partial-columns load; nil otherwise
	// incomplete: a partial load leaves a NOT NULL column without default
	// unset, so it cannot insert new keys.
	incomplete bool
}

// LoadedRows is the number of rows the batch will apply (total − filtered − unselected).
func (b *Batch) LoadedRows() int64 { return b.TotalRows - b.FilteredRows - b.UnselectedRows }

// Table holds one table's schema and visible rows.
type Table struct {
	// meta is replaced whole by Alter (under st.mu); loads read it once
	// at Prepare and Apply remaps a batch prepared under an older one.
	meta atomic.Pointer[tableMeta]
	st   tableState
	now  func() time.Time
}

// New creates an empty table. It returns an error when the schema cannot be
// emulated.
func New(s *schema.Table) (*Table, error) {
	m, err := newMeta(s)
	if err != nil {
		return nil, err
	}
	t := &Table{now: time.Now}
	t.meta.Store(m)
	t.st.keyed = newKeyStore(m.keyIdx, len(m.types))
	return t, nil
}

// Schema returns the table's schema (not to be modified).
func (t *Table) Schema() *schema.Table { return t.meta.Load().s }

// SetClock replaces the clock used for CURRENT_TIMESTAMP defaults (time.Now
// by default). Call it before loading.
func (t *Table) SetClock(now func() time.Time) { t.now = now }

// Prepare reads the whole body and parses it under spec. It returns an error
// (Doris message text) when the load must fail for a reason other than the
// filter ratio, which the caller checks with the Batch counters.
// In counting mode it only counts rows and bytes.
// Errors are *Error values carrying the Doris status code.
func (t *Table) Prepare(spec LoadSpec, body io.Reader) (*Batch, error) {
	t.st.mu.Lock()
	counting := t.st.counting
	t.st.mu.Unlock()
	if counting {
		return countBody(spec, body)
	}
	return t.prepare(spec, body)
}

// Apply makes a committed batch visible, following the data model.
func (t *Table) Apply(b *Batch) { t.apply(b) }

// Rows returns a copy of the visible rows in schema column order (values nil,
// int64, float64 or string), sorted by key columns.
func (t *Table) Rows() [][]any { return t.rows() }

// Version changes whenever the visible rows change.
func (t *Table) Version() uint64 {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.version
}

// SetCounting switches counting mode: loads are parsed minimally, counted and
// discarded (for throughput benchmarks).
func (t *Table) SetCounting(on bool) {
	t.st.mu.Lock()
	t.st.counting = on
	t.st.mu.Unlock()
}

// Counts returns the rows and bytes loaded in counting mode.
func (t *Table) Counts() (rows, bytes int64) {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.cRows, t.st.cBytes
}
