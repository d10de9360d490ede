package root

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

type result struct {
	code     int
	out, err string
}

func runCLI(t *testing.T, tty bool, args ...string) result {
	t.Helper()
	f, out, errOut := cmdutil.NewTestFactory(tty)
	code := Main(context.Background(), args, f)
	return result{code, out.String(), errOut.String()}
}

func decodeJSON(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.out), v); err != nil {
		t.Fatalf("output is not JSON (%v): %q, stderr %q", err, r.out, r.err)
	}
}

// env is an emulated Doris with table demo.orders and a helper to
// precommit loads.
type env struct {
	srv    *doristest.Server
	client *doris.Client
	conn   []string // --fe ... --mysql ... --db demo
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, err := doristest.NewServer(doristest.SeedDatabases("demo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateTable("demo", "CREATE TABLE orders (id BIGINT, v VARCHAR(8)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	c, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{srv: srv, client: c, conn: []string{"--fe", srv.FEURL(), "--mysql", srv.MySQLAddr(), "--db", "demo"}}
}

// precommit runs a 2PC Stream Load (docs/doris-facts.md §1, §3) and returns its txn id.
func (e *env) precommit(t *testing.T, l string) int64 {
	t.Helper()
	res, err := e.client.StreamLoad(context.Background(), doris.LoadRequest{DB: "demo", Table: "orders", Label: l, Format: "json",
		TwoPhaseCommit: true, ReadJSONByLine: true}, strings.NewReader(`{"id":1,"v":"a"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return res.TxnID
}

func (e *env) args(a ...string) []string { return append(a, e.conn...) }

func TestLabelStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := "j1:demo-orders:0:1"
	id := e.precommit(t, l)

	r := runCLI(t, false, e.args("label", "status", l, "-o", "json")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var st struct {
		State       string `json:"state"`
		Parsed      struct{ Job string }
		Transaction struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"transaction"`
	}
	decodeJSON(t, r, &st)
	if st.State != "PRECOMMITTED" || st.Transaction.ID != id || st.Transaction.Status != "PRECOMMITTED" || st.Parsed.Job != "j1" {
		t.Errorf("got %+v", st)
	}
	// Human output: aligned on a TTY, tab-separated when piped.
	tty := runCLI(t, true, e.args("label", "status", l)...)
	pipe := runCLI(t, false, e.args("label", "status", l)...)
	if !strings.Contains(tty.out, "State:") || !strings.Contains(tty.out, "PRECOMMITTED") {
		t.Errorf("tty output %q", tty.out)
	}
	if !strings.Contains(pipe.out, "State\tPRECOMMITTED\n") || !strings.Contains(pipe.out, "Txn id\t"+strconv.FormatInt(id, 10)+"\n") {
		t.Errorf("piped output %q", pipe.out)
	}
	// Unknown label: UNKNOWN and no transaction.
	r = runCLI(t, false, e.args("label", "status", "never-used", "-o", "json")...)
	decodeJSON(t, r, &st)
	if st.State != "UNKNOWN" {
		t.Errorf("unknown label state %q", st.State)
	}
	if r := runCLI(t, false, "label", "status", l, "--fe", e.srv.FEURL()); r.code != cmdutil.ExitUsage {
		t.Errorf("without --db: exit %d", r.code)
	}
}

func TestTxnCommitAbort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l1, l2 := "j2:demo-orders:0:1", "j2:demo-orders:0:2"
	id1 := e.precommit(t, l1)
	e.precommit(t, l2)
	ids := strconv.FormatInt(id1, 10)
	// No job's config: these doris-sink labels need --force (the store
	// guard is tested in cmd/txn).

	// No terminal, no --yes: refused, nothing changes.
	r := runCLI(t, false, e.args("txn", "commit", "--force", ids)...)
	if r.code != cmdutil.ExitNotConfirmed || !strings.Contains(r.err, "Warning:") || !strings.Contains(r.err, "--yes") {
		t.Errorf("unconfirmed commit: exit %d, stderr %q", r.code, r.err)
	}
	if st := e.srv.LabelState("demo", l1); st != doris.TxnPrecommitted {
		t.Fatalf("state after refused commit: %s", st)
	}
	// Dry run.
	var res struct {
		Outcome string `json:"outcome"`
		Before  struct {
			Status string `json:"status"`
		} `json:"before"`
		DryRun bool `json:"dry_run"`
	}
	r = runCLI(t, false, e.args("txn", "commit", "--force", ids, "--dry-run", "-o", "json")...)
	decodeJSON(t, r, &res)
	if res.Outcome != "would commit" || !res.DryRun || res.Before.Status != "PRECOMMITTED" {
		t.Errorf("dry run %+v", res)
	}
	if st := e.srv.LabelState("demo", l1); st != doris.TxnPrecommitted {
		t.Fatalf("state after dry run: %s", st)
	}
	// Commit, then commit again.
	r = runCLI(t, false, e.args("txn", "commit", "--force", ids, "--yes", "-o", "json")...)
	decodeJSON(t, r, &res)
	if r.code != 0 || res.Outcome != "committed" {
		t.Errorf("commit: exit %d %+v %s", r.code, res, r.err)
	}
	if st := e.srv.LabelState("demo", l1); st != doris.TxnVisible {
		t.Errorf("state after commit: %s", st)
	}
	// Issue 30: the human output shows the state after the commit, the
	// one before labelled as such (not "Txn status PRECOMMITTED" beside
	// "Outcome committed").
	id3 := e.precommit(t, "j2:demo-orders:0:3")
	r = runCLI(t, true, e.args("txn", "commit", "--force", strconv.FormatInt(id3, 10), "--yes")...)
	if r.code != 0 || !regexp.MustCompile(`Txn status:\s+VISIBLE`).MatchString(r.out) ||
		!regexp.MustCompile(`Status before:\s+PRECOMMITTED`).MatchString(r.out) {
		t.Errorf("commit on a terminal: exit %d, stdout %q: want Txn status VISIBLE and Status before PRECOMMITTED", r.code, r.out)
	}
	r = runCLI(t, false, e.args("txn", "commit", "--force", ids, "--yes", "-o", "json")...)
	decodeJSON(t, r, &res)
	if res.Outcome != "already committed" {
		t.Errorf("second commit: %+v", res)
	}
	// Abort by label.
	r = runCLI(t, false, e.args("txn", "abort", "--force", "--label", l2, "--yes", "-o", "json")...)
	decodeJSON(t, r, &res)
	if r.code != 0 || res.Outcome != "aborted" || e.srv.LabelState("demo", l2) != doris.TxnAborted {
		t.Errorf("abort: exit %d %+v %s", r.code, res, r.err)
	}
	// Status by label.
	var tx struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	r = runCLI(t, false, e.args("txn", "status", "--label", l1, "-o", "json")...)
	decodeJSON(t, r, &tx)
	if tx.ID != id1 || tx.Status != "VISIBLE" {
		t.Errorf("txn status %+v", tx)
	}
	if r := runCLI(t, false, e.args("txn", "status", "999999")...); r.code != cmdutil.ExitError {
		t.Errorf("unknown txn: exit %d", r.code)
	}
}

// writeConfig writes a job config for e and returns its path.
func writeConfig(t *testing.T, e *env, brokers, table, extra string) (path, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	dataDir = filepath.Join(dir, "data")
	yaml := "job: {name: j3, data_dir: " + dataDir + ", coordinator: file}\n" +
		"kafka: {brokers: [" + brokers + "], topic: orders}\n" +
		"doris: {fe: [" + e.srv.FEURL() + "], mysql: " + e.srv.MySQLAddr() + ", database: demo, table: " + table + "}\n" + extra
	path = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, dataDir
}

func TestCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	cfg, _ := writeConfig(t, e, kc.ListenAddrs()[0], "orders", "")
	var rep struct {
		Checks []struct{ Status, Check, Detail string } `json:"checks"`
		Failed int                                      `json:"failed"`
	}
	r := runCLI(t, false, "check", "-c", cfg, "-o", "json")
	decodeJSON(t, r, &rep)
	if r.code != 0 || rep.Failed != 0 {
		t.Errorf("check: exit %d %+v", r.code, rep)
	}
	seen := map[string]string{}
	for _, c := range rep.Checks {
		seen[c.Check] = c.Status
	}
	for check, want := range map[string]string{"doris fe": "OK", "doris table": "OK", "late events": "WARN",
		"precommit timeout": "OK", "label retention": "OK", "running txns": "OK", "store": "OK", "kafka topic": "OK", "label prefix": "OK"} {
		if seen[check] != want {
			t.Errorf("check %q = %q, want %q (%+v)", check, seen[check], want, rep.Checks)
		}
	}
	// A missing table, a missing topic and debezium on a table without a
	// delete sign are blockers: exit 4, each a FAIL line.
	cfg, _ = writeConfig(t, e, kc.ListenAddrs()[0], "nope", "")
	r = runCLI(t, false, "check", "-c", cfg)
	if r.code != cmdutil.ExitCheckFailed || !strings.Contains(r.out, "FAIL\tdoris table\t") {
		t.Errorf("missing table: exit %d out %q", r.code, r.out)
	}
	if err := e.srv.CreateTable("demo", "CREATE TABLE dup (id BIGINT, v VARCHAR(8)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	cfg, _ = writeConfig(t, e, kc.ListenAddrs()[0], "dup", "records: {format: debezium}\ndelivery: {guarantee: at-least-once}\n")
	r = runCLI(t, false, "check", "-c", cfg)
	if r.code != cmdutil.ExitCheckFailed || !strings.Contains(r.out, "FAIL\tdeletes\t") || !strings.Contains(r.out, "WARN\tdelivery vs model\t") {
		t.Errorf("debezium on duplicate: exit %d out %q", r.code, r.out)
	}
	if err := kc.DeleteTopic("orders"); err != nil {
		t.Fatal(err)
	}
	cfg, _ = writeConfig(t, e, kc.ListenAddrs()[0], "orders", "")
	r = runCLI(t, false, "check", "-c", cfg, "--timeout", "5s")
	if r.code != cmdutil.ExitCheckFailed || !strings.Contains(r.out, "FAIL\tkafka topic\t") {
		t.Errorf("missing topic: exit %d out %q", r.code, r.out)
	}
}

func TestCheckpointShowListResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg, dataDir := writeConfig(t, e, "127.0.0.1:1", "orders", "")
	owner := checkpoint.Owner{Job: "j3", DB: "demo", Table: "orders", Source: "kafka:orders", Writer: "0"}
	store, err := checkpoint.OpenFile(dataDir, owner)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	st, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := st.Announce(now)
	a2, _ := st.Announce(now)
	id := e.precommit(t, a1.Label)
	st.Decide(checkpoint.Decision{ID: a1.ID, Label: a1.Label, TxnID: id, DecidedAt: now,
		Start: json.RawMessage(`{"0":0}`), End: json.RawMessage(`{"0":10}`)})
	if err := store.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	var show struct {
		Decided struct {
			ID    uint64 `json:"id"`
			Label string `json:"label"`
			End   json.RawMessage
		} `json:"decided"`
		Announced []struct{ Label string } `json:"announced"`
	}
	// Works while the store is locked by its writer.
	r := runCLI(t, false, "checkpoint", "show", "-c", cfg, "-o", "json")
	decodeJSON(t, r, &show)
	if show.Decided.ID != 1 || show.Decided.Label != a1.Label || compact(show.Decided.End) != `{"0":10}` ||
		len(show.Announced) != 1 || show.Announced[0].Label != a2.Label {
		t.Errorf("show %+v", show)
	}
	if r := runCLI(t, true, "checkpoint", "show", "-c", cfg); !strings.Contains(r.out, "Announced, undecided") {
		t.Errorf("show human %q", r.out)
	}

	var list []struct {
		Label      string `json:"label"`
		Role       string `json:"role"`
		DorisState string `json:"doris_state"`
	}
	r = runCLI(t, false, "label", "list", "-c", cfg, "-o", "json")
	decodeJSON(t, r, &list)
	if len(list) != 2 || list[0].Label != a2.Label || list[0].Role != "announced" || list[0].DorisState != "UNKNOWN" ||
		list[1].Role != "decided" || list[1].DorisState != "PRECOMMITTED" {
		t.Errorf("list %+v", list)
	}
	// label status with -c adds what the store knows.
	var ls struct {
		Store []struct{ Role string } `json:"store"`
	}
	r = runCLI(t, false, e.args("label", "status", a1.Label, "-c", cfg, "-o", "json")...)
	decodeJSON(t, r, &ls)
	if len(ls.Store) != 1 || ls.Store[0].Role != "decided" {
		t.Errorf("label status store %+v", ls)
	}

	// Resolve: refused while the store is locked by its writer, the dry run
	// too (it shows what the real run would do); once released, and once
	// Doris forgot the label (resolve refuses an --assume that contradicts
	// what Doris holds: cmd/checkpoint tests), it works.
	r = runCLI(t, false, "checkpoint", "resolve", "-c", cfg, "--checkpoint", "1", "--assume", "aborted", "--dry-run")
	if r.code != cmdutil.ExitError || !strings.Contains(r.err, "locked") {
		t.Errorf("resolve dry run while locked: %d %q %q", r.code, r.out, r.err)
	}
	if r := runCLI(t, false, "checkpoint", "resolve", "-c", cfg, "--checkpoint", "1", "--assume", "visible", "--yes"); r.code != cmdutil.ExitError {
		t.Errorf("resolve while locked: exit %d %q", r.code, r.err)
	}
	store.Close()
	if e.srv.TimeoutPrecommitted() != 1 || e.srv.ExpireLabels("demo") == 0 {
		t.Fatal("the decided label did not expire")
	}
	r = runCLI(t, false, "checkpoint", "resolve", "-c", cfg, "--checkpoint", "1", "--assume", "aborted", "--dry-run")
	if r.code != 0 || !strings.Contains(r.out, "Would record checkpoint 1") {
		t.Errorf("resolve dry run: %d %q %q", r.code, r.out, r.err)
	}
	if r := runCLI(t, false, "checkpoint", "resolve", "-c", cfg, "--checkpoint", "1", "--assume", "visible"); r.code != cmdutil.ExitNotConfirmed {
		t.Errorf("resolve without --yes: exit %d %q", r.code, r.err)
	}
	r = runCLI(t, false, "checkpoint", "resolve", "-c", cfg, "--checkpoint", "1", "--assume", "visible", "--yes", "-o", "json")
	var rr struct {
		Assumed string `json:"assumed"`
		Label   string `json:"label"`
	}
	decodeJSON(t, r, &rr)
	if rr.Assumed != "visible" || rr.Label != a1.Label {
		t.Errorf("resolve %+v", rr)
	}
	after, err := checkpoint.ReadFile(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Decided.Committed || len(after.Resolved) != 1 {
		t.Errorf("store after resolve: %+v", after)
	}
}

func TestExitCodesAndVersion(t *testing.T) {
	t.Parallel()
	if r := runCLI(t, false, "nope"); r.code != cmdutil.ExitUsage || !strings.Contains(r.err, "unknown command") {
		t.Errorf("unknown command: %+v", r)
	}
	if r := runCLI(t, false, "version", "--bogus"); r.code != cmdutil.ExitUsage || !strings.Contains(r.err, "Usage:") {
		t.Errorf("bad flag: %+v", r)
	}
	if r := runCLI(t, false, "version", "extra"); r.code != cmdutil.ExitUsage {
		t.Errorf("extra arg: %+v", r)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("job: {name: 'no spaces'}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, false, "checkpoint", "show", "-c", bad); r.code != cmdutil.ExitConfig || !strings.Contains(r.err, "job.name") || !strings.Contains(r.err, "hint:") {
		t.Errorf("bad config: %+v", r)
	}
	var v struct{ Version, Go string }
	r := runCLI(t, false, "version", "-o", "json")
	decodeJSON(t, r, &v)
	if v.Version != "test" || v.Go == "" {
		t.Errorf("version %+v", v)
	}
	if r := runCLI(t, false, "version"); !strings.HasPrefix(r.out, "doris-sink test (") {
		t.Errorf("version human %q", r.out)
	}
}

// Labels the tests build are real doris-sink labels.
func TestLabelsAreValid(t *testing.T) {
	t.Parallel()
	if _, err := label.Parse("j1:demo-orders:0:1"); err != nil {
		t.Fatal(err)
	}
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}
