package verify

import (
	"context"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader"
)

// Issue 12: with job.coordinator kafka `verify` read the store from
// job.data_dir (none there: no store checks). It reads the state topic now.
func TestVerifyReadsKafkaState(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, 20, 5)
	want := j.State()
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	v, err := readState(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := v.State
	if st.Decided == nil || st.Decided.ID != want.Decided.ID || st.Decided.TxnID != want.Decided.TxnID {
		t.Fatalf("verify's state of a kafka job: %+v %v, want decided checkpoint %d", st, err, want.Decided.ID)
	}
	rec := Reconcile(context.Background(), Input{Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table, State: st})
	if len(rec.Findings) == 0 {
		t.Errorf("no finding for a decided checkpoint missing from an empty ledger: %+v", rec)
	}
}
