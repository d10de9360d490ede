package fileload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// review2: a CSV load with a line_delimiter header other than "\n" (Doris
// supports any delimiter: fe/fe-core/.../load/loadv2 StreamLoadTask
// setLineDelimiter; doristest separators_test.go) is split into chunks on
// '\n' and each file/piece gets a '\n' appended: chunk cuts fall inside
// rows and the last row of a file is glued to the first of the next.
// Either the header must be honoured by the chunking or refused before
// anything begins; today it is accepted and ignored by the splitter.
func TestReview2CustomLineDelimiterHonouredOrRefused(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	// Rows separated by '|'; values hold '\n' (legal with a custom
	// line delimiter). Two files, no trailing delimiter on each.
	var a, b bytes.Buffer
	for k := 0; k < 20; k++ {
		w := &a
		if k >= 10 {
			w = &b
		}
		if k != 0 && k != 10 {
			w.WriteByte('|')
		}
		fmt.Fprintf(w, "%d\tline\nnext-%d", k, k)
	}
	o := opts(c, store, writeFile(t, dir, "a.csv", a.Bytes()), writeFile(t, dir, "b.csv", b.Bytes()))
	// max_filter_ratio lets Doris drop the rows the chunking breaks: the
	// load then "succeeds" with rows lost or mangled.
	o.Headers = map[string]string{"line_delimiter": "|", "max_filter_ratio": "1"}
	o.Workers, o.ChunkBytes = 3, 16
	_, err := Run(ctx(t), o)
	if err != nil {
		// Refused: acceptable only if nothing was sent (a refusal up front).
		if n := len(keys(t, s)); n != 0 {
			t.Fatalf("Run = %v with %d rows visible", err, n)
		}
		t.Logf("Run refused: %v", err)
		return
	}
	wantExactlyOnce(t, s, 20)
	rows, _ := s.Rows("demo", "t")
	for _, r := range rows {
		if want := fmt.Sprintf("line\nnext-%d", toInt(t, r[0])); r[1] != want {
			t.Fatalf("row %v: v = %q, want %q (a row split or glued by the chunking)", r, r[1], want)
		}
	}
}

// review2: a round decided (worker 0 already committed) before a kill -9
// is never committed when an input file's modification time changed
// before the rerun (touch, a backup tool, a still-open writer): open()
// refuses the store with a *MismatchError before recover() commits the
// decision, although committing decided txns reads no file. The rows of
// worker 0 stay visible, the other decided txns stay PRECOMMITTED until
// Doris aborts them (stream_load_default_precommit_timeout_second): a
// partial load after the decision, which the design promises never
// happens ("after it, the commits complete even across kill -9"). The
// error's advice (remove the store) makes it permanent.
func TestReview2DecidedRoundCommittedDespiteTouchedFile(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 150, true)
	o := opts(c, store, a, csvFile(t, dir, "b.csv", 150, 200, true))
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailAfterCommitBeforeLedger, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash after worker 0 committed", err)
	}
	partial := len(keys(t, s))
	if partial == 0 || partial == 200 {
		t.Fatalf("%d rows visible after the crash: want worker 0's only", partial)
	}
	// Same content, new modification time.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = nil
	_, err := Run(ctx(t), o)
	if n := len(keys(t, s)); n != 200 {
		t.Fatalf("rerun = %v; %d rows visible (%d before it): the decided round is left partly committed", err, n, partial)
	}
	wantExactlyOnce(t, s, 200)
	wantSettled(t, s)
}

// review2: skip_lines (be/src/http/action/stream_load.cpp HTTP_SKIP_LINES
// → TStreamLoadPutRequest.skip_lines: the BE's CSV reader skips the first
// N lines of the Stream Load body) is accepted as an extra header and
// sent on every worker's Stream Load: on a real BE each of the W bodies
// loses its first N lines (the first line of a chunk in the middle of a
// file is a data row), and the header line of the second file of a body is
// loaded as a row. The emulator ignores the header, so the load looks
// right here; the load must refuse it before anything begins (or skip the
// lines itself, per file). Today it is sent and nothing is refused.
func TestReview2SkipLinesRefusedBeforeAnythingBegins(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	o := opts(c, store, csvFile(t, dir, "a.csv", 0, 100, true), csvFile(t, dir, "b.csv", 100, 200, true))
	o.Headers = map[string]string{"skip_lines": "1"}
	_, err := Run(ctx(t), o)
	txns, terr := s.Txns("demo")
	if terr != nil {
		t.Fatal(terr)
	}
	if err == nil || len(txns) != 0 {
		t.Fatalf("Run with skip_lines = %v after %d txns: want it refused before any Stream Load (each of the %d "+
			"worker bodies would lose its first line on a real BE)", err, len(txns), o.Workers)
	}
}

// review2: after a split load committed its first round and crashed, a
// changed modification time of an input file makes the rerun fail with a
// *MismatchError whose advice is "use another --store". Following it
// loads every file again under a new load id (Prefix hashes the mtime:
// new labels, so Doris's label check cannot catch it): the first round's
// rows are in the table twice. The error must not advise a path that
// duplicates committed rows (or the load must refuse it: the store knows
// which rows are committed).
func TestReview2MismatchAdviceDoesNotDuplicateCommittedRounds(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfPrecommitTimeout, 1000))
	dir, store := t.TempDir(), t.TempDir()
	a := csvFile(t, dir, "a.csv", 0, 150, true)
	o := opts(c, store, a, csvFile(t, dir, "b.csv", 150, 300, true))
	o.Split, o.AssumedRate = true, 1 // rounds of about 1500 bytes
	fp := loader.NewFailpoints()
	if _, err := fp.Arm(loader.FailBeforeAnnounce, loader.Crash().Skip(1)); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = fp
	if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Run = %v, want a crash before the second round", err)
	}
	committed := len(keys(t, s))
	if committed == 0 || committed == 300 {
		t.Fatalf("%d rows committed by the first round: want part of the load", committed)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	o.Failpoints = nil
	var me *MismatchError
	_, err := Run(ctx(t), o)
	if !errors.As(err, &me) {
		t.Fatalf("rerun = %v, want the *MismatchError", err)
	}
	// Follow the error's advice.
	o.StoreDir = t.TempDir()
	_, err = Run(ctx(t), o)
	if n := len(keys(t, s)); n > 300 {
		t.Fatalf("following %q: %v; the table holds %d rows of 300 (%d committed before): rows loaded twice",
			me.Error(), err, n, committed)
	}
}
