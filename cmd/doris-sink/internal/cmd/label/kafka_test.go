package label

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 12: with job.coordinator kafka `label list` and `label status` read
// job.data_dir, so the store's labels were missing (and every Doris label
// of the job looked unknown to it). They read the state topic now,
// read-only: the job's live incarnation is not fenced.
func TestKafkaLabelListAndStatus(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, 20, 5)
	st := j.State()
	live := j.OpenStore().(*coordlog.Store)
	defer live.Close()

	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdList(f, nil)
	cmd.SetArgs([]string{"-c", j.Config, "-o", "json"})
	cmd.SetOut(out)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var items []ListItem
	if err := json.Unmarshal(out.Bytes(), &items); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	var found bool
	for _, it := range items {
		if it.UnknownToJob {
			t.Errorf("label %s unknown to the job: the store was not read from Kafka", it.Label.Label)
		}
		if it.Label.Label == st.Decided.Label && slices.Contains(it.FoundIn, FoundStore) && it.Role == "decided" {
			found = true
		}
	}
	if !found {
		t.Errorf("decided label %s not listed from the store: %s", st.Decided.Label, out.String())
	}

	f, out, _ = cmdutil.NewTestFactory(false)
	cmd = NewCmdStatus(f, nil)
	cmd.SetArgs([]string{st.Decided.Label, "-c", j.Config, "-o", "json"})
	cmd.SetOut(out)
	cmd.SetContext(context.Background())
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var res StatusResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if res.StoreError != "" || len(res.Store) != 1 || res.Store[0].Checkpoint != st.Decided.ID || res.Store[0].TxnID != st.Decided.TxnID {
		t.Errorf("label status store view: %+v (error %q)", res.Store, res.StoreError)
	}
	if err := live.CheckFenced(context.Background()); err != nil {
		t.Errorf("the live job was fenced by a read: %v", err)
	}
}
