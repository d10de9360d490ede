package run

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// logTap collects the JSON log lines of a run and lets a test wait for one.
type logTap struct {
	mu      sync.Mutex
	lines   []map[string]any
	changed chan struct{}
}

func newLogTap() (*logTap, io.WriteCloser) {
	tap := &logTap{changed: make(chan struct{})}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			tap.mu.Lock()
			tap.lines = append(tap.lines, m)
			close(tap.changed)
			tap.changed = make(chan struct{})
			tap.mu.Unlock()
		}
	}()
	return tap, pw
}

// wait returns the first line whose msg starts with prefix.
func (l *logTap) wait(t *testing.T, prefix string) map[string]any {
	t.Helper()
	return l.waitFor(t, prefix, func(m map[string]any) bool {
		msg, _ := m["msg"].(string)
		return strings.HasPrefix(msg, prefix)
	})
}

// exitLine waits for run's exit line (the one counting the checkpoints).
func (l *logTap) exitLine(t *testing.T) map[string]any {
	t.Helper()
	return l.waitFor(t, "the exit line", func(m map[string]any) bool { _, ok := m["checkpoints_decided"]; return ok })
}

func (l *logTap) waitFor(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		l.mu.Lock()
		ch := l.changed
		for _, m := range l.lines {
			if match(m) {
				l.mu.Unlock()
				return m
			}
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no log line: %s", what)
		}
	}
}

// runEnv is a Kafka topic and a Doris emulator for in-process runs of Run.
type runEnv struct {
	t     *testing.T
	kc    *kfake.Cluster
	srv   *doristest.Server
	dir   string
	table string
	// env is the environment config.Load reads (nil: none).
	env []string
	// brokers, fe and topic replace kafka.brokers, doris.fe and
	// kafka.topic ("": the cluster's, the emulator's, orders).
	brokers, fe, topic string
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, _ := cmdutil.NewTestDoris(t, "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	return &runEnv{t: t, kc: kc, srv: srv, dir: t.TempDir(), table: "t"}
}

func (e *runEnv) produce(n int) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"v":"v"}`, i)})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// start runs Run in a goroutine with extra YAML lines; it returns the
// signal channel, the log tap and Run's result.
func (e *runEnv) start(extra string) (chan<- os.Signal, *logTap, <-chan error) {
	e.t.Helper()
	path := filepath.Join(e.dir, "job.yaml")
	yaml := fmt.Sprintf(`job: { name: sig, data_dir: %s }
kafka: { brokers: [%s], topic: %s }
doris: { fe: [%s], mysql: %s, user: root, database: demo, table: %s }
metrics: { listen: "" }
log: { format: json, level: info }
%s`, filepath.Join(e.dir, "data"), cmp.Or(e.brokers, strings.Join(e.kc.ListenAddrs(), ", ")), cmp.Or(e.topic, "orders"), cmp.Or(e.fe, e.srv.FEURL()),
		e.srv.MySQLAddr(), e.table, extra)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	tap, w := newLogTap()
	sigs := make(chan os.Signal, 2)
	opts := &Options{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: w},
		Factory: &cmdutil.Factory{}, Signals: sigs,
		loadConfig: func() (*config.Config, error) {
			return config.Load(config.LoadOptions{File: path, Need: config.NeedRun, Environ: func() []string { return e.env }})
		}}
	opts.Factory.IO = opts.IO
	done := make(chan error, 1)
	go func() {
		err := Run(context.Background(), opts)
		w.Close()
		done <- err
	}()
	return sigs, tap, done
}

func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("run did not end after one SIGTERM")
		return nil
	}
}

// Issue 11: on SIGTERM after a run that loaded nothing, run printed
// "drained: every record read was checkpointed" and exited 0. Now the
// exit line says nothing was loaded; after a run that loaded, it says how
// many checkpoints this run decided and the position to resume from.
func TestDrainSaysWhatWasLoaded(t *testing.T) {
	t.Parallel()
	t.Run("nothing", func(t *testing.T) {
		t.Parallel()
		e := newRunEnv(t)
		sigs, tap, done := e.start("")
		tap.wait(t, "recovered; reading")
		sigs <- syscall.SIGTERM
		if err := result(t, done); err != nil {
			t.Fatalf("Run: %v", err)
		}
		m := tap.exitLine(t)
		if msg := m["msg"].(string); !strings.Contains(msg, "nothing was loaded") {
			t.Errorf("exit line %q, want it to say nothing was loaded", msg)
		}
	})
	t.Run("loaded", func(t *testing.T) {
		t.Parallel()
		e := newRunEnv(t)
		e.produce(5)
		sigs, tap, done := e.start("delivery: { checkpoint_max_rows: 5 }\n")
		tap.wait(t, "checkpoint decided")
		sigs <- syscall.SIGTERM
		if err := result(t, done); err != nil {
			t.Fatalf("Run: %v", err)
		}
		m := tap.exitLine(t)
		if m["checkpoints_decided"] != float64(1) || !strings.Contains(fmt.Sprint(m["position"]), `"0":5`) {
			t.Errorf("exit line %v, want 1 checkpoint decided and position offset 5", m)
		}
		// Issue 30: one drained line, not "drained: nothing to checkpoint"
		// before it.
		tap.mu.Lock()
		defer tap.mu.Unlock()
		for _, l := range tap.lines {
			if msg, _ := l["msg"].(string); strings.HasPrefix(msg, "drained") && l["checkpoints_decided"] == nil {
				t.Errorf("a second drained line: %v", l)
			}
		}
	})
}

// Issue 11: a job loading into a table that does not exist retried
// forever and ignored the first SIGTERM. Now, with a long fail-fast grace
// so that the run is still retrying, one SIGTERM ends it: the retry wait
// ends at once, the drain's retry fails the same way and run exits with
// one error line naming the table and the fix, not "drained".
func TestSigtermWhileFailingEnds(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	e.table = "missing"
	e.produce(3)
	sigs, tap, done := e.start("delivery: { fail_fast_after: 10m, checkpoint_max_rows: 3 }\n")
	tap.wait(t, "checkpoint failed; recovering")
	sigs <- syscall.SIGTERM
	err := result(t, done)
	var fe *kafka.FatalError
	if !errors.As(err, &fe) {
		t.Fatalf("Run: %v, want a *kafka.FatalError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "demo.missing") || !strings.Contains(msg, "doris.table") ||
		strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming demo.missing and doris.table", msg)
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for _, m := range tap.lines {
		if _, ok := m["checkpoints_decided"]; ok {
			t.Errorf("a failing run logged the drained line %v", m)
		}
	}
}

// With the default grace (here 0: at the first failure) an unknown table
// ends run without any signal.
func TestUnknownTableExits(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	e.table = "missing"
	e.produce(3)
	_, _, done := e.start("delivery: { fail_fast_after: 0s, checkpoint_max_rows: 3 }\n")
	err := result(t, done)
	var fe *kafka.FatalError
	if !errors.As(err, &fe) || cmdutil.ExitCode(err) != cmdutil.ExitError {
		t.Fatalf("Run: %v (exit %d), want a *kafka.FatalError, exit 1", err, cmdutil.ExitCode(err))
	}
}
