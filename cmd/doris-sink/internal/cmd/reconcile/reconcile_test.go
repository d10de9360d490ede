package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
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
