package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Issue 12 "Budget": how long a label survives is min(keep, threshold ÷
// (slots × tables × sub-loads) × interval); the limit that sets it is
// named.
func TestLabelBudgetWindow(t *testing.T) {
	t.Parallel()
	keep := 12 * time.Hour
	for _, tc := range []struct {
		b    labelBudget
		want time.Duration
		why  string
	}{
		{labelBudget{Interval: 10 * time.Second, Tables: 1, Slots: 1, Threshold: 2000, Keep: keep}, 20000 * time.Second, "label_num_threshold 2000"},
		{labelBudget{Interval: 10 * time.Second, Tables: 10, Slots: 20, Threshold: 2000, Keep: keep}, 100 * time.Second, "20 slot(s) × 10 table(s)"},
		{labelBudget{Interval: time.Minute, Tables: 1, Slots: 1, Threshold: 2000, Keep: keep}, keep, "streaming_label_keep_max_second"},
		{labelBudget{Interval: 10 * time.Second, Tables: 1, Slots: 1, SubLoads: 4, Threshold: 2000, Keep: keep}, 5000 * time.Second, "1 slot(s) × 1 table(s) × 4 sub-load(s)"},
		{labelBudget{Interval: time.Second, Tables: 1, Slots: 1, Threshold: -1, Keep: keep}, keep, "streaming_label_keep_max_second"},
	} {
		w, why := tc.b.window()
		if w != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%+v: window %v (%s), want %v naming %q", tc.b, w, why, tc.want, tc.why)
		}
	}
	if got := (labelBudget{Interval: 10 * time.Second, Tables: 1, Slots: 1, SubLoads: 4}).perHour(); got != 1440 {
		t.Errorf("perHour with 4 sub-loads = %v, want 1440", got)
	}
	if got := (labelBudget{Interval: 10 * time.Second, Tables: 1, Slots: 1}).perHour(); got != 360 {
		t.Errorf("perHour = %v, want 360", got)
	}
}

// check reads label_num_threshold and streaming_label_keep_max_second from
// the FE config (the emulator serves ADMIN SHOW FRONTEND CONFIG) and grades
// the window: shorter than a session timeout fails, shorter than an hour or
// the precommit timeout warns, otherwise OK.
func TestCheckLabelRetentionFromFEConfig(t *testing.T) {
	t.Parallel()
	srv, client := cmdutil.NewTestDoris(t, "CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	for _, tc := range []struct {
		threshold, precommit int64
		interval             time.Duration
		status               string
		detail               string
	}{
		{2000, 3600, 10 * time.Second, OK, "about 5h33m20s"},
		{2000, 7200, 2 * time.Second, Warn, "shorter than the precommit timeout 2h0m0s"},
		{100, 3600, 10 * time.Second, Warn, "needs `checkpoint resolve`"},
		{10, 3600, time.Second, Fail, "shorter than the Kafka session timeout 45s"},
	} {
		if err := srv.SetFEConfig("label_num_threshold", tc.threshold); err != nil {
			t.Fatal(err)
		}
		if err := srv.SetFEConfig("stream_load_default_precommit_timeout_second", tc.precommit); err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{Delivery: config.Delivery{CheckpointInterval: tc.interval}}
		var r Report
		checkClocks(context.Background(), &r, client, cfg)
		var line *Line
		for i := range r.Lines {
			if r.Lines[i].Check == "label retention" {
				line = &r.Lines[i]
			}
		}
		if line == nil || line.Status != tc.status || !strings.Contains(line.Detail, tc.detail) || !strings.Contains(line.Detail, "FE config") {
			t.Errorf("threshold %d interval %v: %+v, want %s naming %q (from the FE config)", tc.threshold, tc.interval, line, tc.status, tc.detail)
		}
	}
}

// The budget counts the configured writers: job.slots × (doris.table and
// the tables routing names) × doris.sub_loads labels per checkpoint, and
// twice that running at once (one loading, one committing each); routing
// by record field makes the table count a lower bound.
func TestLabelBudgetOfConfig(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Job: config.Job{Slots: 4}, Delivery: config.Delivery{CheckpointInterval: 10 * time.Second},
		Doris:   config.Doris{Database: "db", Table: "t", SubLoads: 2},
		Routing: config.Routing{TopicTables: map[string]string{"a": "u", "b": "db.v", "c": "t"}}}
	b := budgetOf(cfg, 2000, 12*time.Hour)
	if b.perCheckpoint() != 24 || b.running() != 48 || b.shape() != "4 slot(s) × 3 table(s) × 2 sub-load(s)" {
		t.Errorf("budget %+v: %d per checkpoint, %d running, %q", b, b.perCheckpoint(), b.running(), b.shape())
	}
	if w, _ := b.window(); w != 2000/24*10*time.Second {
		t.Errorf("window %v", w)
	}
	cfg.Routing.TableField = "table"
	if b := budgetOf(cfg, 2000, time.Hour); !b.TablesOpen || !strings.Contains(b.shape(), "at least 3 table(s)") {
		t.Errorf("routing by field: %q", b.shape())
	}

	for _, tc := range []struct {
		limit  int64
		status string
	}{{47, Fail}, {48, Warn}, {239, Warn}, {240, OK}} {
		var r Report
		checkRunningTxns(&r, b, tc.limit)
		if l := r.Lines[0]; l.Status != tc.status || !strings.Contains(l.Detail, "up to 48 txns") {
			t.Errorf("limit %d: %+v, want %s", tc.limit, l, tc.status)
		}
	}
}

// The label window is graded against the configured session timeout
// (kafka.session_timeout), not a fixed 45 s.
func TestLabelBudgetSessionTimeout(t *testing.T) {
	t.Parallel()
	b := labelBudget{Interval: time.Second, Tables: 1, Slots: 2, Threshold: 120, Keep: 12 * time.Hour} // 60 s
	for _, tc := range []struct {
		session time.Duration
		status  string
	}{{0, Warn}, {45 * time.Second, Warn}, {2 * time.Minute, Fail}} {
		var r Report
		checkLabelBudget(&r, b, tc.session, time.Hour, "test")
		if l := r.Lines[0]; l.Status != tc.status {
			t.Errorf("session %v: %+v, want %s", tc.session, l, tc.status)
		}
	}
}

// Issue 25: check warns when the binary was built with an older toolchain
// than the tested one, and says OK with the tested one.
func TestCheckToolchainWarnsOnOlderGo(t *testing.T) {
	t.Parallel()
	r := &Report{}
	checkToolchain(r, "go1.26.8")
	checkToolchain(r, cmdutil.TestedGo)
	if r.Warned != 1 || len(r.Lines) != 2 || r.Lines[0].Status != Warn || r.Lines[1].Status != OK ||
		!strings.Contains(r.Lines[0].Detail, "go1.26.8") || !strings.Contains(r.Lines[0].Detail, cmdutil.TestedGo) {
		t.Fatalf("lines %+v, want WARN naming go1.26.8 and %s, then OK", r.Lines, cmdutil.TestedGo)
	}
}
