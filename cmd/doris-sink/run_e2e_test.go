package main

// Subprocess tests of `doris-sink run`: the binary is built once (TestMain)
// and run as a child against an in-process Kafka (kfake) and Doris
// emulator started by the test. The tests wait on the child's JSON log
// lines and exit status, never on sleeps.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
)

// binary is the doris-sink binary built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	if b := os.Getenv("E2E_DORIS_SINK_BIN"); b != "" { // a prebuilt binary
		binary = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "doris-sink-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "doris-sink")
	out, err := exec.Command("go", "build", "-race", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build doris-sink: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

const (
	e2eTopic = "orders"
	e2eDB    = "demo"
	e2eTable = "t"
)

// e2e is one test's Kafka, Doris and config file.
type e2e struct {
	t       *testing.T
	kafka   *kfake.Cluster
	doris   *doristest.Server
	dir     string
	config  string
	records int // produced so far
}

// newE2E starts Kafka and Doris and writes the job's config; delivery
// replaces the delivery line when not empty.
func newE2E(t *testing.T, delivery string) *e2e {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, e2eTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	// The job's processes are members of its consumer group (job.slots
	// 1 too): Kafka's rule that a member waiting in its join is not
	// expired, which kfake lacks (design §7.2, liveness).
	stopKeep, err := kafkatest.KeepParkedMembers(kc, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopKeep)
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase(e2eDB); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable(e2eDB, "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	if delivery == "" {
		delivery = "delivery: { checkpoint_interval: 1s, checkpoint_max_rows: 40 }"
	}
	e := &e2e{t: t, kafka: kc, doris: srv, dir: t.TempDir()}
	e.config = filepath.Join(e.dir, "job.yaml")
	yaml := fmt.Sprintf(`job: { name: e2e, data_dir: %s }
kafka: { brokers: [%s], topic: %s }
doris: { fe: [%s], mysql: %s, user: root, database: %s, table: %s }
%s
metrics: { listen: "127.0.0.1:0" }
log: { format: json, level: info }
`, filepath.Join(e.dir, "data"), strings.Join(kc.ListenAddrs(), ", "), e2eTopic, srv.FEURL(), srv.MySQLAddr(), e2eDB, e2eTable, delivery)
	if err := os.WriteFile(e.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// produce writes n JSON rows with ids continuing the previous ones.
func (e *e2e) produce(n int) {
	e.t.Helper()
	var rs []*kgo.Record
	for i := range n {
		id := e.records + i + 1
		rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "%d", id), Value: fmt.Appendf(nil, `{"id":%d,"v":"r%d"}`, id, id)})
	}
	e.produceRaw(rs...)
	e.records += n
}

func (e *e2e) produceRaw(rs ...*kgo.Record) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kafka.ListenAddrs()...), kgo.DefaultProduceTopic(e2eTopic))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(e.t.Context(), rs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// checkRows asserts the table holds ids 1..records exactly once each.
func (e *e2e) checkRows() {
	e.t.Helper()
	rows, err := e.doris.Rows(e2eDB, e2eTable)
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[fmt.Sprint(r[0])]++
	}
	if len(rows) != e.records || len(seen) != e.records {
		e.t.Errorf("table has %d rows, %d distinct ids; want %d of each (exactly once)", len(rows), len(seen), e.records)
	}
	for id, n := range seen {
		if n != 1 {
			e.t.Errorf("id %s loaded %d times", id, n)
		}
	}
}

// txnsIn counts the transactions of the db in state st.
func (e *e2e) txnsIn(st doris.TxnStatus) int {
	e.t.Helper()
	txns, err := e.doris.Txns(e2eDB)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, tx := range txns {
		if tx.Status == st {
			n++
		}
	}
	return n
}

// child is a running `doris-sink run`.
type child struct {
	t    *testing.T
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs []map[string]any
	text strings.Builder
	more chan struct{} // closed and replaced on every line
	done chan struct{}
	err  error
}

// start runs `doris-sink run -c config` with extra environment.
func (e *e2e) start(env ...string) *child {
	e.t.Helper()
	return startChild(e.t, []string{"run", "-c", e.config}, env...)
}

func startChild(t *testing.T, args []string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() { // hermetic: no DORIS_SINK_* of the caller
		if !strings.HasPrefix(kv, "DORIS_SINK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	c := &child{t: t, cmd: cmd, more: make(chan struct{}), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var m map[string]any
			_ = json.Unmarshal([]byte(line), &m)
			c.mu.Lock()
			c.text.WriteString(line + "\n")
			if m != nil {
				c.logs = append(c.logs, m)
			}
			close(c.more)
			c.more = make(chan struct{})
			c.mu.Unlock()
		}
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("child %v stderr:\n%s", args, c.stderr())
		}
	})
	return c
}

func (c *child) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

// waitLog waits for a JSON log line satisfying match, or the child's exit.
func (c *child) waitLog(what string, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 30*time.Second)
	defer cancel()
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.logs); i++ {
			if match(c.logs[i]) {
				l := c.logs[i]
				c.mu.Unlock()
				return l
			}
		}
		more := c.more
		c.mu.Unlock()
		select {
		case <-more:
		case <-c.done:
			c.mu.Lock()
			n := len(c.logs)
			c.mu.Unlock()
			if i >= n {
				c.t.Fatalf("child exited (%v) before logging %s", c.err, what)
			}
		case <-ctx.Done():
			c.t.Fatalf("no log line %s: %v", what, ctx.Err())
		}
	}
}

// waitDecided waits for a "checkpoint decided" line whose end covers n
// offsets in all.
func (c *child) waitDecided(n int) {
	c.t.Helper()
	c.waitLog(fmt.Sprintf("checkpoint decided up to %d offsets", n), func(m map[string]any) bool {
		return m["msg"] == "checkpoint decided" && sumOffsets(m["end"]) == n
	})
}

// logged reports whether the child logged a JSON line satisfying match
// so far.
func (c *child) logged(match func(map[string]any) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.logs {
		if match(l) {
			return true
		}
	}
	return false
}

func msgIs(msg string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["msg"] == msg }
}

func sumOffsets(pos any) int {
	p, _ := pos.(map[string]any)
	offs, _ := p["offsets"].(map[string]any)
	n := 0
	for _, v := range offs {
		f, _ := v.(float64)
		n += int(f)
	}
	return n
}

// wait waits for the child to exit and returns its exit code.
func (c *child) wait() int {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Fatal("child did not exit")
	}
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		return ee.ExitCode()
	}
	if c.err != nil {
		c.t.Fatalf("child: %v", c.err)
	}
	return 0
}

func (c *child) signal(s os.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(s); err != nil {
		c.t.Fatal(err)
	}
}

// finish restarts the job without failpoints, waits until every record is
// decided, drains it with SIGTERM and checks the rows.
func (e *e2e) finish() {
	e.t.Helper()
	e.start().drainAfter(e.records)
	e.checkRows()
	e.checkNoOpenTxns("after the final drain")
}

// checkNoOpenTxns asserts no transaction of the db is left PREPARE or
// PRECOMMITTED.
func (e *e2e) checkNoOpenTxns(when string) {
	e.t.Helper()
	if n := e.txnsIn(doris.TxnPrecommitted) + e.txnsIn(doris.TxnPrepare); n != 0 {
		e.t.Errorf("%d transactions left PREPARE/PRECOMMITTED %s", n, when)
	}
}

// crashAt runs the job with the failpoint fp armed to crash and waits for
// the crash's exit code.
func (e *e2e) crashAt(fp string) {
	e.t.Helper()
	c := e.start(run.FailpointsEnv + "=" + fp + "=crash")
	if code := c.wait(); code != run.ExitCrashed {
		e.t.Fatalf("exit code %d, want %d (failpoint %s crash)", code, run.ExitCrashed, fp)
	}
}

// drainAfter waits until the first n offsets are decided, sends SIGTERM
// and checks that the drain exits 0.
func (c *child) drainAfter(n int) {
	c.t.Helper()
	c.waitDecided(n)
	c.signal(syscall.SIGTERM)
	if code := c.wait(); code != 0 {
		c.t.Fatalf("exit code %d after SIGTERM, want 0 (drain)", code)
	}
}

func TestE2ECrashMidStream(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(100)
	e.crashAt(loader.FailMidStream)
	e.produce(30)
	e.finish()
}

func TestE2ECrashAfterPrecommit(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(100)
	e.crashAt(loader.FailAfterPrecommit)
	if n := e.txnsIn(doris.TxnPrecommitted); n != 1 {
		t.Errorf("after the crash Doris holds %d PRECOMMITTED txns, want 1 (recovery aborts it)", n)
	}
	e.finish()
}

func TestE2ECrashAfterDecide(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(100)
	e.crashAt(loader.FailAfterDecide)
	e.finish()
}

func TestE2ESigtermDrainsThenResumes(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(100)
	c := e.start()
	c.waitLog("recovered; reading", msgIs("recovered; reading"))
	c.signal(syscall.SIGTERM)
	if code := c.wait(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0 (drain)", code)
	}
	e.checkNoOpenTxns("after a drain")
	e.finish() // resumes where the drain stopped: no loss, no duplicate
}

// TestE2ESecondSignalAborts: a second SIGTERM during a drain aborts it:
// exit 130, the open transaction aborted, nothing decided; the restart
// loads every record exactly once. The drain is held at its precommit by a
// blocking emulator fault, so the second signal lands while it is in
// flight.
func TestE2ESecondSignalAborts(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	held, err := e.doris.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(held.Remove)
	e.produce(100)
	c := e.start()
	if err := held.Wait(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	c.signal(syscall.SIGTERM)
	c.waitLog("the drain warning", func(m map[string]any) bool { // the group path drains every slot job
		msg, _ := m["msg"].(string)
		return strings.HasPrefix(msg, "signal: draining") && strings.HasSuffix(msg, "(a second signal aborts)")
	})
	c.signal(syscall.SIGTERM)
	if code := c.wait(); code != cmdutil.ExitInterrupted {
		t.Fatalf("exit code %d after a second SIGTERM, want %d (abort)", code, cmdutil.ExitInterrupted)
	}
	c.waitLog("the abort warning", msgIs("second signal: aborting the open transaction"))
	if c.logged(msgIs("checkpoint decided")) {
		t.Error("a checkpoint was decided although the drain was aborted before its decision")
	}
	e.checkNoOpenTxns("after the abort")
	if rows, _ := e.doris.Rows(e2eDB, e2eTable); len(rows) != 0 {
		t.Errorf("%d rows visible after an aborted first checkpoint, want 0", len(rows))
	}
	e.finish()
}

func TestE2EConfigErrorNamesKey(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "delivery: { guarantee: exactly-once, batch_mode: true }")
	c := e.start()
	if code := c.wait(); code == 0 {
		t.Fatal("exit code 0 for an invalid config")
	}
	if out := c.stderr(); !strings.Contains(out, "delivery.batch_mode") || !strings.Contains(out, "delivery.guarantee") {
		t.Errorf("stderr does not name delivery.batch_mode and delivery.guarantee:\n%s", out)
	}
}

func TestE2EBadRecordNamesPosition(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produceRaw(&kgo.Record{Partition: 0, Value: []byte(`{"id":1,"v":"ok"}`)},
		&kgo.Record{Partition: 0, Value: []byte(`not json`)})
	c := e.start()
	if code := c.wait(); code == 0 {
		t.Fatal("exit code 0 with a bad record")
	}
	out := c.stderr()
	if !strings.Contains(out, e2eTopic+"/") || !strings.Contains(out, "@1") {
		t.Errorf("stderr does not name the record's topic/partition@offset:\n%s", out)
	}
	if rows, _ := e.doris.Rows(e2eDB, e2eTable); len(rows) != 0 {
		t.Errorf("%d rows loaded from a checkpoint holding a bad record, want 0", len(rows))
	}
}

func TestE2EDorisDownAtStart(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(50)
	e.doris.FEDown()
	c := e.start()
	c.waitLog("a retried Doris failure", func(m map[string]any) bool {
		switch msg, _ := m["msg"].(string); {
		case msg == "checkpoint failed", msg == "recover failed; retrying", msg == "abort failed, retrying":
			return true
		case strings.HasPrefix(msg, "doris.fe ") && strings.Contains(msg, "no FE answered"):
			return true // the start waits for a first answer within delivery.fail_fast_after (issue 30)
		}
		return false
	})
	if err := e.doris.FEUp(); err != nil {
		t.Fatal(err)
	}
	c.drainAfter(e.records)
	e.checkRows()
}

func TestE2EDorisDownMidRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "")
	e.produce(50)
	c := e.start()
	c.waitDecided(e.records)
	e.doris.BEDown()
	e.produce(50)
	c.waitLog("a failed checkpoint", msgIs("checkpoint failed"))
	if err := e.doris.BEUp(); err != nil {
		t.Fatal(err)
	}
	c.drainAfter(e.records)
	e.checkRows()
}
