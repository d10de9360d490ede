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
// (tables × members) × interval); the limit that sets it is named.
func TestLabelBudgetWindow(t *testing.T) {
	t.Parallel()
	keep := 12 * time.Hour
	for _, tc := range []struct {
		b    labelBudget
		want time.Duration
		why  string
	}{
		{labelBudget{Interval: 10 * time.Second, Tables: 1, Members: 1, Threshold: 2000, Keep: keep}, 20000 * time.Second, "label_num_threshold 2000"},
		{labelBudget{Interval: 10 * time.Second, Tables: 10, Members: 20, Threshold: 2000, Keep: keep}, 100 * time.Second, "10 table(s) × 20 member(s)"},
		{labelBudget{Interval: time.Minute, Tables: 1, Members: 1, Threshold: 2000, Keep: keep}, keep, "streaming_label_keep_max_second"},
		{labelBudget{Interval: 10 * time.Second, Tables: 1, Members: 1, SubLoads: 4, Threshold: 2000, Keep: keep}, 5000 * time.Second, "1 table(s) × 4 sub-load(s) × 1 member(s)"},
		{labelBudget{Interval: time.Second, Tables: 1, Members: 1, Threshold: -1, Keep: keep}, keep, "streaming_label_keep_max_second"},
	} {
		w, why := tc.b.window()
		if w != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%+v: window %v (%s), want %v naming %q", tc.b, w, why, tc.want, tc.why)
		}
	}
	if got := (labelBudget{Interval: 10 * time.Second, Tables: 1, Members: 1, SubLoads: 4}).perHour(); got != 1440 {
		t.Errorf("perHour with 4 sub-loads = %v, want 1440", got)
	}
	if got := (labelBudget{Interval: 10 * time.Second, Tables: 1, Members: 1}).perHour(); got != 360 {
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
		{10, 3600, time.Second, Fail, "shorter than a Kafka session timeout"},
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
