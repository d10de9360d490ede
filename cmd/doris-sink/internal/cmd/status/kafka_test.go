package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 12: with job.coordinator kafka `status` found no store in
// job.data_dir. It reads the state topic now (read-only) and names it.
func TestStatusReadsKafkaState(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, 20, 5)
	want := j.State()
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics.Listen = ""
	res := collect(context.Background(), cfg, time.Now)
	if !res.Store.Found || res.Store.Error != "" || res.Store.StateTopic != coordlog.StateTopic(jobtest.Name) || res.Store.Offset == nil ||
		res.LastCheckpoint == nil || res.LastCheckpoint.ID != want.Decided.ID {
		t.Fatalf("status of a kafka job: store %+v, last checkpoint %+v; want decided %d from the state topic",
			res.Store, res.LastCheckpoint, want.Decided.ID)
	}
}

// A kafka job that never ran: no store found, and the human view names the
// state topic instead of a data dir.
func TestStatusKafkaJobNeverRan(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics.Listen = ""
	res := collect(context.Background(), cfg, time.Now)
	if res.Store.Found || res.Store.Error != "" || res.Store.StateTopic != coordlog.StateTopic(jobtest.Name) {
		t.Fatalf("store of a kafka job that never ran: %+v", res.Store)
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	if err := printResult(f.IO, res, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no state in Kafka state topic "+coordlog.StateTopic(jobtest.Name)) {
		t.Errorf("human view:\n%s", out.String())
	}
}
