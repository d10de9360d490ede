package fileload

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/label"
)

// Plain and gzip CSV files, one without a final newline, load every row
// exactly once through one txn per worker, each label parseable with the
// worker as its sub-load; a rerun of the same load sends nothing.
func TestLoadCSVPlainAndGzip(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir := t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 100, false)
	b := csvFile(t, dir, "b.csv.gz", 100, 150, true)
	d := csvFile(t, dir, "c.csv", 150, 300, true)
	o := opts(c, t.TempDir(), a, b, d)
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	wantExactlyOnce(t, s, 300)
	if res.Rows != 300 || res.Txns != 3 || len(res.Labels) != 3 || res.Rounds != 1 || res.TotalRows != 300 {
		t.Fatalf("result %+v: want 300 rows over 3 txns in 1 round", res)
	}
	for w, l := range res.Labels {
		p, err := label.Parse(l)
		if err != nil {
			t.Fatalf("label %s: %v", l, err)
		}
		if p.Sub != w || p.Checkpoint != 1 || !strings.HasPrefix(p.Prefix, "load-") {
			t.Fatalf("label %s parses as %+v: want worker %d of attempt 1 under a load- prefix", l, p, w)
		}
		if st := s.LabelState("demo", l); st != doris.TxnVisible {
			t.Fatalf("label %s is %s, want VISIBLE", l, st)
		}
	}
	again, err := Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if !again.AlreadyDone || again.Rows != 0 || again.TotalRows != 300 {
		t.Fatalf("rerun %+v: want already done, nothing sent", again)
	}
	wantExactlyOnce(t, s, 300)
}

// JSON lines load with read_json_by_line.
func TestLoadJSONLines(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	var b strings.Builder
	for k := range 40 {
		b.WriteString(`{"k":` + strconv.Itoa(k) + `,"v":"x"}` + "\n")
	}
	f := writeFile(t, t.TempDir(), "rows.json", []byte(b.String()))
	o := opts(c, t.TempDir(), f)
	o.Format = "json"
	if _, err := Run(ctx(t), o); err != nil {
		t.Fatal(err)
	}
	wantExactlyOnce(t, s, 40)
}

// One worker's load failing before the decision aborts every txn of the
// round: nothing is visible, the error names the failing label, and a
// rerun loads everything exactly once.
func TestWorkerFailureAbortsEveryTxn(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir := t.TempDir()
	f := csvFile(t, dir, "a.csv", 0, 200, true)
	o := opts(c, t.TempDir(), f)
	files, err := statFiles(o.Files)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := label.BuildSub(Prefix("demo", "t", files), "demo", "t", "0", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Label: bad,
		Err: &doristest.FaultErr{Message: "[INTERNAL_ERROR]disk full"}}); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx(t), o)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Run = %v, want an error naming label %s", err, bad)
	}
	if ks := keys(t, s); len(ks) != 0 {
		t.Fatalf("%d rows visible after a failed round, want none", len(ks))
	}
	txns, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.LabelState("demo", bad); st != doris.TxnAborted {
		t.Fatalf("failed label %s is %s, want ABORTED", bad, st)
	}
	// The others were cancelled or aborted: none is left running.
	for _, x := range txns {
		if x.Status != doris.TxnAborted {
			t.Fatalf("txn %d (%s) is %s after the failed round, want ABORTED", x.ID, x.Label, x.Status)
		}
	}
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 200 || res.Labels[0] == "" || !strings.HasSuffix(res.Labels[0], ":0:2") {
		t.Fatalf("rerun %+v: want 200 rows under attempt 2", res)
	}
	wantExactlyOnce(t, s, 200)
}

// A store holding another load (other files, or another table) is refused
// naming both, before anything is sent.
func TestStoreRefusesAnotherLoad(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 10, true)
	b := csvFile(t, dir, "b.csv", 10, 20, true)
	if _, err := Run(ctx(t), opts(c, store, a)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx(t), opts(c, store, b))
	var me *MismatchError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
		t.Fatalf("Run with other files = %v, want a *MismatchError naming %s and %s", err, a, b)
	}
	o := opts(c, store, a)
	o.Table = "u"
	if _, err := Run(ctx(t), o); !errors.As(err, &me) || !strings.Contains(err.Error(), "demo.u") ||
		!strings.Contains(err.Error(), "demo.t") {
		t.Fatalf("Run into another table = %v, want a *MismatchError naming demo.t and demo.u", err)
	}
	wantExactlyOnce(t, s, 10)
}

// A second process on the same store is refused while the first holds it.
func TestStoreLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var le *LockedError
	if _, err := OpenStore(dir); !errors.As(err, &le) {
		t.Fatalf("second OpenStore = %v, want *LockedError", err)
	}
}

// A changed input file is refused on resume: the recorded positions no
// longer mean the same rows.
func TestChangedFileRefused(t *testing.T) {
	t.Parallel()
	_, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 10, true)
	if _, err := Run(ctx(t), opts(c, store, a)); err != nil {
		t.Fatal(err)
	}
	csvFile(t, dir, "a.csv", 0, 11, true)
	var me *MismatchError
	if _, err := Run(ctx(t), opts(c, store, a)); !errors.As(err, &me) || !strings.Contains(me.Why, "changed") {
		t.Fatalf("Run after the file changed = %v, want a *MismatchError saying it changed", err)
	}
}

// The same load run again with another store (its store lost) meets its
// own labels, already VISIBLE: it is refused by Doris, nothing is loaded
// twice, and the error says why.
func TestSameLoadWithAnotherStoreRefusedByLabel(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	f := csvFile(t, t.TempDir(), "a.csv", 0, 100, true)
	if _, err := Run(ctx(t), opts(c, t.TempDir(), f)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx(t), opts(c, t.TempDir(), f))
	if !errors.Is(err, doris.ErrLabelAlreadyExists) || !strings.Contains(err.Error(), "already ran with another store") {
		t.Fatalf("second load with a new store = %v, want ErrLabelAlreadyExists explained", err)
	}
	wantExactlyOnce(t, s, 100)
}

// With Compression the bodies stream compressed (gz, lz4) and every row
// loads once; a raw compress_type header is refused (the body would not
// match it).
func TestLoadCompressedBodies(t *testing.T) {
	t.Parallel()
	for _, comp := range []doris.Compression{doris.CompressGzip, doris.CompressLZ4} {
		t.Run(string(comp), func(t *testing.T) {
			t.Parallel()
			s, c := newDoris(t, ddl)
			o := opts(c, t.TempDir(), csvFile(t, t.TempDir(), "a.csv", 0, 120, true))
			o.Compression = comp
			if _, err := Run(ctx(t), o); err != nil {
				t.Fatal(err)
			}
			wantExactlyOnce(t, s, 120)
		})
	}
	_, c := newDoris(t, ddl)
	o := opts(c, t.TempDir(), csvFile(t, t.TempDir(), "a.csv", 0, 1, true))
	o.Headers = map[string]string{"compress_type": "gz"}
	if _, err := Run(ctx(t), o); err == nil || !strings.Contains(err.Error(), "compress_type") {
		t.Fatalf("Run with a raw compress_type header = %v, want a refusal", err)
	}
}

// Empty files load nothing and begin no txn; beside a non-empty one they
// are skipped.
func TestEmptyFiles(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty.csv", nil)
	res, err := Run(ctx(t), opts(c, t.TempDir(), empty))
	if err != nil || res.Rows != 0 || res.Txns != 0 {
		t.Fatalf("Run of an empty file = %+v, %v; want nothing loaded, no txn", res, err)
	}
	if _, err := Run(ctx(t), opts(c, t.TempDir(), empty, csvFile(t, dir, "a.csv", 0, 20, true))); err != nil {
		t.Fatal(err)
	}
	wantExactlyOnce(t, s, 20)
}

// The summary's filtered_rows is the sum of the committed txns'
// NumberFilteredRows: a row with too few columns is filtered by Doris
// under max_filter_ratio (docs/doris-facts.md §8).
func TestResultCountsFilteredRows(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	o := opts(c, store, writeFile(t, dir, "a.csv", []byte("1\tv-1\nonly-one-column\n2\tv-2\n")),
		writeFile(t, dir, "b.csv", []byte("3\tv-3\nagain-one\n")))
	o.Headers = map[string]string{"max_filter_ratio": "1"}
	o.Workers = 2
	res, err := Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilteredRows != 2 || res.Rows != 3 {
		t.Fatalf("rows %d filtered_rows %d, want 3 loaded and 2 filtered", res.Rows, res.FilteredRows)
	}
	if n := len(keys(t, s)); n != 3 {
		t.Fatalf("%d rows visible, want 3", n)
	}
}
