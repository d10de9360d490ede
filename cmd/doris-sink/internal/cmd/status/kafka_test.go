package status

import (
	"context"
	"testing"
	"time"

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
