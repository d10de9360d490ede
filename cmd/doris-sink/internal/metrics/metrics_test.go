package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

type fakeDoris struct{ commitErr error }

func (fakeDoris) StreamLoad(context.Context, doris.LoadRequest, io.Reader) (*doris.LoadResult, error) {
	return &doris.LoadResult{TxnID: 7, Status: doris.StatusSuccess, TwoPhaseCommit: "true", NumberLoadedRows: 5, LoadBytes: 50}, nil
}
func (f fakeDoris) CommitTxn(context.Context, string, int64) error { return f.commitErr }
func (fakeDoris) AbortTxn(context.Context, string, int64) error    { return nil }
func (fakeDoris) AbortLabel(context.Context, string, string) error { return errors.New("down") }
func (fakeDoris) LoadState(context.Context, string, string) (doris.TxnStatus, error) {
	return doris.TxnVisible, nil
}

func TestWrapDorisCountsOutcomes(t *testing.T) {
	t.Parallel()
	m := New()
	d := m.WrapDoris(fakeDoris{}, "db.t")
	if _, err := d.StreamLoad(t.Context(), doris.LoadRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitTxn(t.Context(), "db", 7); err != nil {
		t.Fatal(err)
	}
	if err := d.AbortLabel(t.Context(), "db", "l"); err == nil {
		t.Fatal("AbortLabel error was swallowed")
	}
	for name, want := range map[string]float64{
		TxnPrecommitted: 1, TxnCommitted: 1, TxnAbortFailed: 1, TxnCommitFailed: 0,
	} {
		if got := value(t, m.txns.WithLabelValues("db.t", name)); got != want {
			t.Errorf("txns{kind=%s} = %v, want %v", name, got, want)
		}
	}
	if got := value(t, m.rowsCommit.WithLabelValues("db.t")); got != 5 {
		t.Errorf("rows committed = %v, want 5", got)
	}
	if got := value(t, m.bytes.WithLabelValues("db.t")); got != 50 {
		t.Errorf("bytes = %v, want 50", got)
	}
}

// A routed job's loads count under the table each loads, and the commit
// of a txn under the table of its load, not under the job's table.
func TestWrapDorisCountsPerRoutedTable(t *testing.T) {
	t.Parallel()
	m := New()
	d := m.WrapDoris(fakeDoris{}, "db.t")
	if _, err := d.StreamLoad(t.Context(), doris.LoadRequest{DB: "db", Table: "routed"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitTxn(t.Context(), "db", 7); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    prometheus.Counter
		name string
		want float64
	}{
		{m.rows.WithLabelValues("db.routed"), "rows precommitted db.routed", 5},
		{m.rowsCommit.WithLabelValues("db.routed"), "rows committed db.routed", 5},
		{m.bytes.WithLabelValues("db.routed"), "bytes db.routed", 50},
		{m.txns.WithLabelValues("db.routed", TxnCommitted), "commits db.routed", 1},
		{m.rowsCommit.WithLabelValues("db.t"), "rows committed db.t", 0},
		{m.txns.WithLabelValues("db.t", TxnCommitted), "commits db.t", 0},
	} {
		if got := value(t, tc.c); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWrapStoreCountsDecisions(t *testing.T) {
	t.Parallel()
	m := New()
	owner := checkpoint.Owner{Job: "j", DB: "db", Table: "t", Writer: "0"}
	s := m.WrapStore(checkpoint.NewMemory(owner), "db.t")
	st, err := s.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ann, err := st.Announce(now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if got := value(t, m.checkpoints.WithLabelValues("db.t")); got != 0 {
		t.Errorf("an announcement counted as %v decisions", got)
	}
	st.Decide(checkpoint.Decision{ID: ann.ID, Label: ann.Label, TxnID: 7, End: []byte(`{"p":1}`), DecidedAt: now})
	if err := s.Save(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if got := value(t, m.checkpoints.WithLabelValues("db.t")); got != 1 {
		t.Errorf("decisions = %v, want 1", got)
	}
}

func TestHandlerHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	m := New()
	km := &kafka.Metrics{}
	km.Records.Add(3)
	var sweeps loader.SweepStats
	km.CountSweeps(&sweeps)
	sweeps.Aborted.Add(2)
	sweeps.Failed.Add(1)
	if err := m.RegisterConnector("orders", "db.t", km); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d", code)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before recovery = %d, want 503", code)
	}
	m.SetReady(true)
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d, want 200", code)
	}
	_, body := get("/metrics")
	if !strings.Contains(body, `doris_sink_records_consumed_total{table="db.t",topic="orders"} 3`) {
		t.Errorf("/metrics lacks the connector's records counter:\n%s", body)
	}
	for _, want := range []string{`doris_sink_zombie_txns_aborted_total{table="db.t",topic="orders"} 2`,
		`doris_sink_zombie_txn_abort_failures_total{table="db.t",topic="orders"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}

// value reads a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
