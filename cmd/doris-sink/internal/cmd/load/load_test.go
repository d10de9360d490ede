package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/fileload"
)

const ddl = "CREATE TABLE t (k BIGINT, v VARCHAR(64)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"

func csv(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "%d,v%d\n", k, k)
	}
	p := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func args(s *doristest.Server, store string, extra ...string) []string {
	return append([]string{"--table", "demo.t", "--fe", s.FEURL(), "--mysql", s.MySQLAddr(), "--user", "root",
		"--store", store, "-H", "column_separator:,", "--workers", "3", "--chunk-bytes", "100"}, extra...)
}

func rowCount(t *testing.T, s *doristest.Server) int {
	t.Helper()
	rows, err := s.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// Piped (no terminal), the command prints the JSON summary on stdout.
func TestLoadPrintsJSONSummary(t *testing.T) {
	t.Parallel()
	s, _ := cmdutil.NewTestDoris(t, ddl)
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdLoad(f, nil)
	cmd.SetArgs(append(args(s, t.TempDir()), csv(t, 250)))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var res fileload.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("stdout %q is not the JSON summary: %v", out, err)
	}
	if res.Rows != 250 || res.Txns != 3 || len(res.Labels) != 3 || res.Bytes == 0 {
		t.Fatalf("summary %+v: want 250 rows over 3 txns", res)
	}
	if n := rowCount(t, s); n != 250 {
		t.Fatalf("table has %d rows, want 250", n)
	}
	var fields map[string]any
	if err := json.Unmarshal(out.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	if v, ok := fields["filtered_rows"]; !ok || v != float64(0) {
		t.Fatalf("summary %s: want filtered_rows 0", out)
	}
}

// DORIS_SINK_FAILPOINTS arms the loader's names; a crash exits 137 at the
// cut point (here after the decision), and the same command run again
// commits the decided round: every row once.
func TestLoadCrashExitsThenRerunCommits(t *testing.T) {
	t.Parallel()
	s, _ := cmdutil.NewTestDoris(t, ddl)
	store, file := t.TempDir(), csv(t, 120)
	f, _, _ := cmdutil.NewTestFactory(false)
	f.Environ = func() []string { return []string{run.FailpointsEnv + "=" + loader.FailAfterDecide + "=crash"} }
	code := 0
	cmd := NewCmdLoad(f, func(ctx context.Context, o *Options) error {
		o.Exit = func(c int) { code = c }
		if err := o.Complete(); err != nil {
			return err
		}
		defer o.client.Close()
		return o.Run(ctx)
	})
	cmd.SetArgs(append(args(s, store), file))
	if err := cmd.Execute(); !errors.Is(err, loader.ErrCrashed) || code != cmdutil.ExitCrashed {
		t.Fatalf("crashing load = %v, exit %d; want loader.ErrCrashed and exit %d", err, code, cmdutil.ExitCrashed)
	}
	if n := rowCount(t, s); n != 0 {
		t.Fatalf("%d rows visible after a crash before the commits, want 0", n)
	}
	f2, out, _ := cmdutil.NewTestFactory(false)
	cmd = NewCmdLoad(f2, nil)
	cmd.SetArgs(append(args(s, store), file, "-o", "json"))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var res fileload.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Rows != 120 {
		t.Fatalf("rerun summary %+v: want the decided round of 120 rows committed", res)
	}
	if n := rowCount(t, s); n != 120 {
		t.Fatalf("table has %d rows after the rerun, want 120 exactly once", n)
	}
}

// Flags are checked before anything runs; the default store is derived
// from the table and the file list, under the user cache dir.
func TestLoadFlags(t *testing.T) {
	t.Parallel()
	for _, bad := range [][]string{
		{"a.csv"}, // no --table
		{"--table", "demo.t"},
		{"--table", "demo.t", "--format", "parquet", "a.csv"},
		{"--table", "demo.t", "--workers", "0", "a.csv"},
		{"--table", "demo.t", "-H", "nocolon", "a.csv"},
	} {
		f, _, _ := cmdutil.NewTestFactory(false)
		cmd := NewCmdLoad(f, func(context.Context, *Options) error { return nil })
		cmd.SetArgs(bad)
		cmd.SetErr(new(strings.Builder))
		if err := cmd.Execute(); err == nil {
			t.Errorf("load %v accepted", bad)
		}
	}
	o := &Options{Files: []string{"a.csv", "b.csv"}, db: "demo", table: "t"}
	d1, err := o.StoreDir()
	if err != nil {
		t.Skipf("no user cache dir: %v", err)
	}
	o2 := &Options{Files: []string{"a.csv"}, db: "demo", table: "t"}
	d2, _ := o2.StoreDir()
	if d1 == d2 || !strings.Contains(d1, filepath.Join("doris-sink", "load", "demo-t-")) {
		t.Fatalf("default stores %s and %s: want distinct dirs per file list under doris-sink/load", d1, d2)
	}
}

// The progress line shows a bar, the bytes and the committed txns.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	p := &fileload.Progress{}
	p.Total.Store(10e6)
	p.Sent.Store(5e6)
	p.Committed.Store(2)
	got := progressLine(p, 2e9)
	if !strings.Contains(got, " 50%") || !strings.Contains(got, "5.0/10.0 MB") || !strings.Contains(got, "2.5 MB/s") ||
		!strings.Contains(got, "2 txns committed") {
		t.Fatalf("progress line %q", got)
	}
}

// Issue 30: a run job's config given to load with -c is read for its
// doris.* keys only (doris.format: csv with the run-only rule's
// records.format: json is not refused), and its doris.properties are the
// Stream Load headers: column_separator "," from the config loads rows a
// tab separator would filter; a -H header overrides the property.
func TestLoadConfigPropertiesAndRunOnlyRules(t *testing.T) {
	t.Parallel()
	s, _ := cmdutil.NewTestDoris(t, ddl)
	cfg := filepath.Join(t.TempDir(), "job.yaml")
	yaml := fmt.Sprintf(`job: {name: orders}
kafka: {brokers: [127.0.0.1:1], topic: orders}
records: {format: json}
doris:
  fe: [%s]
  mysql: %s
  user: root
  database: demo
  table: t
  format: csv
  properties: {column_separator: ",", max_filter_ratio: "0"}
`, s.FEURL(), s.MySQLAddr())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdLoad(f, nil)
	cmd.SetArgs([]string{"-c", cfg, "--table", "t", "--store", t.TempDir(), "--workers", "2", csv(t, 40)})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("load -c job.yaml: %v", err)
	}
	var res fileload.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 40 || res.FilteredRows != 0 || rowCount(t, s) != 40 {
		t.Fatalf("summary %+v, %d rows in the table: want 40 rows loaded with the config's column_separator",
			res, rowCount(t, s))
	}
	// -H overrides the property: a tab separator makes every row one
	// column, which Doris filters (max_filter_ratio 0 fails the load).
	f2, _, _ := cmdutil.NewTestFactory(false)
	cmd = NewCmdLoad(f2, nil)
	cmd.SetArgs([]string{"-c", cfg, "--table", "t", "--store", t.TempDir(), "-H", `column_separator:\t`, csv(t, 10)})
	cmd.SetErr(new(strings.Builder))
	if err := cmd.Execute(); err == nil {
		t.Fatal("load with -H column_separator overriding the config's: accepted, want every row filtered")
	}
	if n := rowCount(t, s); n != 40 {
		t.Fatalf("%d rows after the refused load, want the 40 of the first", n)
	}
}

func TestMergeHeaders(t *testing.T) {
	t.Parallel()
	got := MergeHeaders(map[string]string{"column_separator": ",", "columns": "k,v"},
		map[string]string{"Column_Separator": "|", "max_filter_ratio": "0.1"})
	want := map[string]string{"Column_Separator": "|", "columns": "k,v", "max_filter_ratio": "0.1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("MergeHeaders = %v, want %v", got, want)
	}
}

// doris.format of -c is the files' format unless --format is given (an
// option read, not accepted and ignored).
func TestLoadConfigFormat(t *testing.T) {
	t.Parallel()
	s, _ := cmdutil.NewTestDoris(t, ddl)
	cfg := filepath.Join(t.TempDir(), "job.yaml")
	yaml := fmt.Sprintf("doris: {fe: [%s], mysql: %s, user: root, database: demo, format: json}\n", s.FEURL(), s.MySQLAddr())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k := range 20 {
		fmt.Fprintf(&b, "{\"k\":%d,\"v\":\"v%d\"}\n", k, k)
	}
	file := filepath.Join(t.TempDir(), "rows.json")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdLoad(f, nil)
	cmd.SetArgs([]string{"-c", cfg, "--table", "t", "--store", t.TempDir(), file})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("load -c with doris.format json: %v", err)
	}
	if n := rowCount(t, s); n != 20 {
		t.Fatalf("%d rows, want the 20 JSON lines", n)
	}
	var got string
	f2, _, _ := cmdutil.NewTestFactory(false)
	cmd = NewCmdLoad(f2, func(_ context.Context, o *Options) error {
		if err := o.Complete(); err != nil {
			return err
		}
		o.client.Close()
		got = o.Format
		return nil
	})
	cmd.SetArgs([]string{"-c", cfg, "--table", "t", "--format", "csv", file})
	if err := cmd.Execute(); err != nil || got != "csv" {
		t.Fatalf("--format csv over doris.format json: format %q, %v", got, err)
	}
}
