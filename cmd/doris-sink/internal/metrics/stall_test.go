package metrics

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// fakeClock is the clock of Metrics.now in tests.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// newTestMetrics returns Metrics on clock clk with one connector (topic
// orders, table db.t) and its observed store.
func newTestMetrics(t *testing.T, clk *fakeClock) (*Metrics, *kafka.Metrics, *ObservedStore) {
	t.Helper()
	m := New()
	m.now = clk.now
	km := &kafka.Metrics{}
	if err := m.RegisterConnector("orders", "db.t", km); err != nil {
		t.Fatal(err)
	}
	s := m.WrapStore(checkpoint.NewMemory(checkpoint.Owner{Job: "j", DB: "db", Table: "t", Writer: "0"}), "db.t")
	if _, err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m, km, s
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Issue 11: from the first failure /readyz is 503 with the stall's reason
// in its body, doris_sink_stalled is 1 and doris_sink_stalled_seconds
// counts from the stall's start; ClearStall makes it ready again and both
// gauges 0.
func TestReadyzAndGaugesFollowStall(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	m, km, _ := newTestMetrics(t, clk)
	m.SetReady(true)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	if code, body := get(t, srv, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz healthy = %d %q, want 200", code, body)
	}
	const reason = "stream load db.t label j:db-t:0:3: BE 127.0.0.1:8040 refused the connection"
	km.SetStall(clk.t, reason, false)
	clk.t = clk.t.Add(42 * time.Second)
	code, body := get(t, srv, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, reason) || !strings.Contains(body, "db.t") ||
		!strings.Contains(body, "42s") {
		t.Errorf("/readyz stalled = %d %q, want 503 naming the table, 42s and the reason", code, body)
	}
	_, metrics := get(t, srv, "/metrics")
	for _, want := range []string{
		`doris_sink_stalled{table="db.t",topic="orders"} 1`,
		`doris_sink_stalled_seconds{table="db.t",topic="orders"} 42`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics while stalled lacks %q", want)
		}
	}
	km.SetStall(clk.t, "unknown table db.t", true)
	if _, body := get(t, srv, "/readyz"); !strings.Contains(body, "fatal") || !strings.Contains(body, "unknown table db.t") {
		t.Errorf("/readyz fatal stall body %q, want it to say fatal and the new reason", body)
	}
	km.ClearStall()
	if code, body := get(t, srv, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after ClearStall = %d %q, want 200", code, body)
	}
	_, metrics = get(t, srv, "/metrics")
	for _, want := range []string{
		`doris_sink_stalled{table="db.t",topic="orders"} 0`,
		`doris_sink_stalled_seconds{table="db.t",topic="orders"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics after ClearStall lacks %q", want)
		}
	}
}

// /status names the job, its state, stall, last checkpoint (with its
// age) and the per-partition positions with the lag to loaded offsets.
func TestStatusEndpoint(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	m, km, s := newTestMetrics(t, clk)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	status := func() Status {
		t.Helper()
		code, body := get(t, srv, "/status")
		if code != http.StatusOK {
			t.Fatalf("/status = %d %q", code, body)
		}
		var st Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("/status is not JSON: %v: %q", err, body)
		}
		if len(st.Jobs) != 1 {
			t.Fatalf("/status jobs %+v, want one", st.Jobs)
		}
		return st
	}
	if st := status(); st.Ready || st.Jobs[0].State != StateRecovering || st.Jobs[0].Job != "j" || st.Jobs[0].LastCheckpoint != nil {
		t.Errorf("before recovery: %+v", st)
	}
	m.SetReady(true)
	decide(t, s, clk.t)
	clk.t = clk.t.Add(5 * time.Second)
	setPositions(m, map[int32]kafka.PartitionPosition{0: {HighWatermark: 15, Read: 15, Loaded: 10}, 1: {HighWatermark: 4, Read: 4, Loaded: 4}})
	st := status()
	j := st.Jobs[0]
	if !st.Ready || j.State != StateRunning || j.Stall != nil || j.Topic != "orders" || j.Table != "db.t" {
		t.Errorf("running: %+v", st)
	}
	if c := j.LastCheckpoint; c == nil || c.ID != 1 || c.TxnID != 7 || c.AgeSeconds != 5 || c.Committed {
		t.Errorf("last checkpoint %+v, want id 1, txn 7, 5 s old, not committed", c)
	}
	if len(j.Partitions) != 2 || *j.Partitions[0].Lag != 5 || *j.Partitions[0].Loaded != 10 || *j.Partitions[1].Lag != 0 {
		t.Errorf("partitions %+v, want p0 loaded 10 lag 5, p1 lag 0", j.Partitions)
	}
	_, metrics := get(t, srv, "/metrics")
	for _, want := range []string{
		`doris_sink_lag_loaded_records{partition="0",table="db.t",topic="orders"} 5`,
		`doris_sink_lag_loaded_records{partition="1",table="db.t",topic="orders"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	km.SetStall(clk.t, "commit txn 7: Doris down", false)
	clk.t = clk.t.Add(3 * time.Second)
	st = status()
	if j := st.Jobs[0]; st.Ready || j.State != StateStalled || j.Stall == nil || j.Stall.Reason != "commit txn 7: Doris down" ||
		j.Stall.Seconds != 3 {
		t.Errorf("stalled: %+v (stall %+v)", st, j.Stall)
	}
}

// setPositions makes the connector of db.t report pos.
func setPositions(m *Metrics, pos map[int32]kafka.PartitionPosition) {
	m.updateJob("db.t", func(j *job) {
		j.positions = func() map[string]map[int32]kafka.PartitionPosition {
			return map[string]map[int32]kafka.PartitionPosition{"orders": pos}
		}
	})
}

// decide saves a decision (id 1, txn 7) through s.
func decide(t *testing.T, s *ObservedStore, at time.Time) {
	t.Helper()
	st, err := s.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ann, err := st.Announce(at)
	if err != nil {
		t.Fatal(err)
	}
	st.Decide(checkpoint.Decision{ID: ann.ID, Label: ann.Label, TxnID: 7, End: []byte(`{"topic":"orders","offsets":{"0":10}}`), DecidedAt: at})
	if err := s.Save(t.Context(), st); err != nil {
		t.Fatal(err)
	}
}

// The progress line: one INFO line per tick while running with rows/s,
// bytes/s, lag and the last checkpoint's age; WARN with the reason while
// stalled. Ticks come from the test, not a timer.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	m, km, s := newTestMetrics(t, clk)
	m.SetReady(true)
	decide(t, s, clk.t)
	lines := make(chan string, 4)
	log := slog.New(lineHandler{lines})
	p := m.NewProgress(log, clk.t)
	ticks := make(chan time.Time)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx, ticks) }()

	km.Rows.Add(600)
	km.RowBytes.Add(6000)
	setPositions(m, map[int32]kafka.PartitionPosition{0: {HighWatermark: 130, Read: 130, Loaded: 100}})
	ticks <- clk.t.Add(60 * time.Second)
	line := <-lines
	for _, want := range []string{"level=INFO", "msg=progress", "job=j", "table=db.t", "state=running", "rows_per_s=10",
		"bytes_per_s=100", "lag=30", "checkpoint=1", "checkpoint_age=1m0s"} {
		if !strings.Contains(line, want) {
			t.Errorf("running line lacks %q: %s", want, line)
		}
	}
	km.SetStall(clk.t.Add(70*time.Second), "precommit: BE down", false)
	ticks <- clk.t.Add(120 * time.Second)
	line = <-lines
	for _, want := range []string{"level=WARN", "state=stalled", `reason="precommit: BE down"`, "stalled_for=50s", "rows_per_s=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("stalled line lacks %q: %s", want, line)
		}
	}
	cancel()
	<-done
}

// lineHandler sends each record as one text line.
type lineHandler struct{ ch chan<- string }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	th := slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	if err := th.Handle(context.Background(), r); err != nil {
		return err
	}
	h.ch <- b.String()
	return nil
}
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lineHandler) WithGroup(string) slog.Handler      { return h }
