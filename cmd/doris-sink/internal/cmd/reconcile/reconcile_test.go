package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/reconcile"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// The seed article's order pipeline: a UNIQUE state table (sequence column
// op_version, deletes by __DORIS_DELETE_SIGN__) and a DUPLICATE audit table
// with the Kafka partition and offset of every event.
const (
	stateSeqDDL = `CREATE TABLE order_state (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) ` +
		`UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 2 PROPERTIES ` +
		`("enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "op_version")`
	stateNoSeqDDL = `CREATE TABLE order_state (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) ` +
		`UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
	auditDDL = `CREATE TABLE order_audit (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2), ` +
		`src_partition INT, src_offset BIGINT) DUPLICATE KEY(order_id, op_version) DISTRIBUTED BY HASH(order_id) BUCKETS 2`
)

// event is one order event of the seed pipeline.
type event struct {
	id, version int64
	status      string
	amount      string
	partition   int
	offset      int64
}

// orderEvents are orders 1..n: CREATED v1, SHIPPED v3, DELETED v4 for every
// fifth, then a late CANCELLED v2 for every odd order — after SHIPPED, and
// after DELETED for the odd fifths — each in partition id%3 at the next
// offset, in production order.
func orderEvents(n int) [][]event {
	next := map[int]int64{}
	ev := func(id int64, v int64, st string) event {
		p := int(id % 3)
		o := next[p]
		next[p]++
		return event{id, v, st, fmt.Sprintf("%d.%02d", 10+id, id%100), p, o}
	}
	var phases [4][]event
	for id := int64(1); id <= int64(n); id++ {
		phases[0] = append(phases[0], ev(id, 1, "CREATED"))
	}
	for id := int64(1); id <= int64(n); id++ {
		phases[1] = append(phases[1], ev(id, 3, "SHIPPED"))
	}
	for id := int64(5); id <= int64(n); id += 5 {
		phases[2] = append(phases[2], ev(id, 4, "DELETED"))
	}
	for id := int64(1); id <= int64(n); id += 2 {
		phases[3] = append(phases[3], ev(id, 2, "CANCELLED"))
	}
	return phases[:]
}

type pipeline struct {
	srv    *doristest.Server
	client *doris.Client
	cfg    string // job config file
}

// newPipeline creates demo.order_state (stateDDL) and demo.order_audit and
// loads the phases into both, one Stream Load per phase and table, as the
// sink would (state: hidden __DORIS_DELETE_SIGN__ set on deletes).
func newPipeline(t *testing.T, stateDDL string, phases [][]event) *pipeline {
	t.Helper()
	srv, client := cmdutil.NewTestDoris(t, stateDDL)
	if err := srv.CreateTable("demo", auditDDL); err != nil {
		t.Fatal(err)
	}
	p := &pipeline{srv: srv, client: client}
	for i, ph := range phases {
		p.load(t, "order_state", fmt.Sprintf("state-%d", i), ph, true)
		p.load(t, "order_audit", fmt.Sprintf("audit-%d", i), ph, false)
	}
	p.cfg = filepath.Join(t.TempDir(), "job.yaml")
	yaml := fmt.Sprintf("job: {name: orders}\ndoris: {fe: [%q], mysql: %q, user: root, database: demo, table: order_state}\n",
		srv.FEURL(), srv.MySQLAddr())
	if err := os.WriteFile(p.cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pipeline) load(t *testing.T, table, label string, evs []event, state bool) {
	t.Helper()
	var body strings.Builder
	for _, e := range evs {
		del := 0
		if e.status == "DELETED" {
			del = 1
		}
		if state {
			fmt.Fprintf(&body, `{"order_id":%d,"op_version":%d,"status":%q,"amount":%s,"__DORIS_DELETE_SIGN__":%d}`+"\n",
				e.id, e.version, e.status, e.amount, del)
		} else {
			fmt.Fprintf(&body, `{"order_id":%d,"op_version":%d,"status":%q,"amount":%s,"src_partition":%d,"src_offset":%d}`+"\n",
				e.id, e.version, e.status, e.amount, e.partition, e.offset)
		}
	}
	req := doris.LoadRequest{DB: "demo", Table: table, Label: label, Format: "json", ReadJSONByLine: true}
	if state {
		req.HiddenColumns = []string{"__DORIS_DELETE_SIGN__"}
	}
	if _, err := p.client.StreamLoad(context.Background(), req, strings.NewReader(body.String())); err != nil {
		t.Fatalf("load %s: %v", label, err)
	}
}

// run runs `doris-sink reconcile -c <job> args...` in-process and returns
// its exit code and output.
func (p *pipeline) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := reconcile.NewCmdReconcile(f, nil)
	cmd.SetArgs(append([]string{"-c", p.cfg}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	if err != nil {
		fmt.Fprintln(errOut, "error:", err)
	}
	return cmdutil.ExitCode(err), out.String(), errOut.String()
}

var seedArgs = []string{"--audit", "demo.order_audit", "--key", "order_id", "--version", "op_version",
	"--delete-when", "status = 'DELETED'", "--sum", "amount", "--event-id", "src_partition,src_offset"}

func jsonReport(t *testing.T, out string) *reconcile.Report {
	t.Helper()
	var rep reconcile.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON (%v): %q", err, out)
	}
	return &rep
}

// The seed pipeline loaded correctly (sequence column, deletes synced):
// every check agrees, exit 0.
func TestReconcileSeedPipelineAgrees(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, stateSeqDDL, orderEvents(30))
	code, out, errOut := p.run(t, seedArgs...)
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d on correct data:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"mismatched", "resurrected", "duplicate-event", "sum(amount)", "24 live and 6 deleted keys"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	code, out, _ = p.run(t, append(seedArgs, "-o", "json")...)
	rep := jsonReport(t, out)
	if code != 0 || rep.LiveKeys != 24 || rep.DeletedKeys != 6 || rep.ServedRows != 24 || rep.Mismatches() != 0 {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
	if rep.SequenceColumn != "op_version" || rep.ServedModel != "UNIQUE" || len(rep.Sums) != 1 || !rep.Sums[0].Equal {
		t.Fatalf("report %+v", rep)
	}
}

// Without the sequence column the late CANCELLED (v2) overwrites SHIPPED
// (v3) and revives deleted orders: exit 5, naming both with counts.
func TestReconcileStateWithoutSequenceColumn(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, stateNoSeqDDL, orderEvents(30))
	code, out, errOut := p.run(t, seedArgs...)
	if code != cmdutil.ExitGaps {
		t.Fatalf("exit %d, want %d:\n%s\n%s", code, cmdutil.ExitGaps, out, errOut)
	}
	for _, want := range []string{"mismatched: 12 key(s) (order_id), first 12: 1 3 7 9 11 13 17 19 21 23 27 29",
		"resurrected: 3 key(s) (order_id), first 3: 5 15 25", "no sequence column"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	_, out, _ = p.run(t, append(seedArgs, "-o", "json")...)
	rep := jsonReport(t, out)
	mm, rs := rep.Check(reconcile.KindMismatched), rep.Check(reconcile.KindResurrected)
	if mm == nil || mm.Count != 12 || rs == nil || rs.Count != 3 || len(rs.Keys) != 3 || rs.Keys[0][0] != "5" {
		t.Fatalf("checks %+v", rep.Checks)
	}
	if c := rep.Check(reconcile.KindMissing); c == nil || c.Count != 0 {
		t.Fatalf("missing: %+v", c)
	}
	// The resurrected orders' amounts are served but not rebuilt.
	if len(rep.Sums) != 1 || rep.Sums[0].Equal {
		t.Fatalf("sums %+v", rep.Sums)
	}
}

// Every finding at once on a DUPLICATE KEY served table with a two-column
// key: a duplicated key, a tied maximum version, a missing key, a served
// key with no audit row, a mismatched row, an event loaded twice, and the
// sums (tied keys left out of both).
func TestReconcileFindingsMultiColumnKey(t *testing.T) {
	t.Parallel()
	srv, client := cmdutil.NewTestDoris(t, `CREATE TABLE served (region VARCHAR(8), id BIGINT, v VARCHAR(8), amount DECIMAL(10,2)) `+
		`DUPLICATE KEY(region, id) DISTRIBUTED BY HASH(id) BUCKETS 1`)
	if err := srv.CreateTable("demo", `CREATE TABLE audit (region VARCHAR(8), id BIGINT, ver BIGINT, v VARCHAR(8), amount DECIMAL(10,2), ev BIGINT) `+
		`DUPLICATE KEY(region, id) DISTRIBUTED BY HASH(id) BUCKETS 1`); err != nil {
		t.Fatal(err)
	}
	load := func(table, body string) {
		t.Helper()
		if _, err := client.StreamLoad(context.Background(), doris.LoadRequest{DB: "demo", Table: table, Format: "csv",
			ColumnSeparator: ","}, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	load("audit", strings.Join([]string{
		"a,1,1,x,1.00,1", "a,1,2,y,2.00,2", // (a,1): latest y
		"a,2,1,z,3.00,3",                                     // (a,2): served twice
		"b,1,5,p,4.00,4", "b,1,5,q,5.00,5", "b,1,3,r,6.00,6", // (b,1): v5 tied
		"b,2,1,m,7.00,7",                   // (b,2): not served
		"b,3,1,n,8.00,8", "b,3,1,n,8.00,8", // (b,3): one event loaded twice (same ev), served amount differs
	}, "\n")+"\n")
	load("served", strings.Join([]string{"a,1,y,2.00", "a,2,z,3.00", "a,2,z,3.00", "b,1,q,5.00", "b,3,n,9.00", "c,9,w,1.50"}, "\n")+"\n")
	cfg := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "doris: {fe: [%q], mysql: %q, user: root, database: demo, table: served}\n",
		srv.FEURL(), srv.MySQLAddr()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pipeline{srv: srv, client: client, cfg: cfg}
	code, out, errOut := p.run(t, "--audit", "audit", "--key", "region", "--key", "id", "--version", "ver",
		"--sum", "amount", "--event-id", "ev", "-o", "json")
	if code != cmdutil.ExitGaps {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	rep := jsonReport(t, out)
	want := map[string][][]string{
		reconcile.KindMismatched:     {{"b", "3"}},
		reconcile.KindMissing:        {{"b", "2"}},
		reconcile.KindUnaudited:      {{"c", "9"}},
		reconcile.KindDuplicateKey:   {{"a", "2"}},
		reconcile.KindTiedVersion:    {{"b", "1"}},
		reconcile.KindDuplicateEvent: {{"8"}},
		reconcile.KindResurrected:    {},
	}
	for kind, keys := range want {
		c := rep.Check(kind)
		if c == nil || c.Count != int64(len(keys)) || fmt.Sprint(c.Keys) != fmt.Sprint(keys) {
			t.Errorf("%s: got %+v, want keys %v", kind, c, keys)
		}
	}
	if c := rep.Check(reconcile.KindDuplicateKey); c == nil || fmt.Sprint(c.Columns) != "[region id]" {
		t.Errorf("duplicate-key columns: %+v", c)
	}
	// Served without (b,1): 2 + 3 + 3 + 9 + 1.5; rebuilt live, one row per
	// key, without (b,1): 2 + 3 + 7 + 8.
	// (Totals are compared as numbers: the emulator prints a SUM over a
	// join without the DECIMAL scale.)
	if len(rep.Sums) != 1 || !sameNum(rep.Sums[0].Served, "18.5") || !sameNum(rep.Sums[0].Rebuilt, "20") || rep.Sums[0].Equal {
		t.Errorf("sums %+v", rep.Sums)
	}
	if fmt.Sprint(rep.Compared) != "[region id v amount]" {
		t.Errorf("compared %v", rep.Compared)
	}
}

// Bad names and flag combinations are usage errors before any query;
// --where with --audit-job is refused (the job's counts cover the whole table).
func TestReconcileRefusesBadInput(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, stateSeqDDL, orderEvents(3))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--key", "order_id", "--version", "op_version"}, cmdutil.ExitUsage, "--audit, --key and --version are required"},
		{[]string{"--audit", "demo.order_audit", "--key", "order_id", "--version", "op_version", "--audit-job", "x.yaml", "--where", "order_id > 1"}, cmdutil.ExitUsage, "--where and --audit-job together"},
		{[]string{"--audit", "demo.order`audit", "--key", "order_id", "--version", "op_version"}, cmdutil.ExitUsage, "backticks"},
		{[]string{"--audit", "demo.order_audit", "--key", "nope", "--version", "op_version"}, cmdutil.ExitError, `--key "nope": no such column`},
		{[]string{"--audit", "demo.order_audit", "--key", "order_id", "--version", "op_version", "--sum", "src_offset"}, cmdutil.ExitError, `--sum "src_offset": no such column in demo.order_state`},
		{[]string{"--audit", "demo.order_state", "--key", "order_id", "--version", "op_version"}, cmdutil.ExitUsage, "both demo.order_state"},
		{[]string{"--audit", "demo.order_audit", "--key", "order_id", "--version", "op_version", "--where", "no_such_col = 1"}, cmdutil.ExitError, "no_such_col"},
	} {
		code, out, errOut := p.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s\n%s", tc.args, code, tc.code, tc.msg, out, errOut)
		}
	}
}

func sameNum(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}
