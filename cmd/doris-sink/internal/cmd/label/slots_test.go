package label

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
)

// Issue 12: in group mode every writer slot announces and decides its own
// labels (scope j). `label list` reads every slot's state: a label slot 1
// announced and Doris holds PRECOMMITTED is the job's (not "never
// announced"), and `label status` finds slot 1's decided label with its
// scope.
func TestLabelListAndStatusSeeEverySlot(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, 4)
	st0 := j.Decide(0, 2, []map[int32]int64{{0: 5}}, false)
	st1 := j.Decide(1, 2, []map[int32]int64{{1: 7}}, false)
	announced := j.Announce(1, 2)
	if !strings.Contains(announced, ":1:") {
		t.Fatalf("slot 1's label %s has no scope 1", announced)
	}
	ctx := context.Background()
	if _, err := j.Client.StreamLoad(ctx, doris.LoadRequest{DB: jobtest.DB, Table: jobtest.Table, Label: announced, Format: "json",
		TwoPhaseCommit: true}, strings.NewReader(string(jobtest.Row(1)))); err != nil {
		t.Fatal(err)
	}

	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := NewCmdList(f, nil)
	cmd.SetArgs([]string{"-c", j.Config, "-o", "json"})
	cmd.SetOut(out)
	cmd.SetContext(ctx)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var items []ListItem
	if err := json.Unmarshal(out.Bytes(), &items); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	roles := map[string]ListItem{}
	for _, it := range items {
		roles[it.Label.Label] = it
	}
	if it, ok := roles[announced]; !ok || it.UnknownToJob || it.Role != "announced" || it.Scope != "1" || it.DorisState != string(doris.TxnPrecommitted) {
		t.Errorf("slot 1's announced label: %+v (listed %v)", it, ok)
	}
	for _, l := range []string{st0.Decided.Label, st1.Decided.Label} {
		if it, ok := roles[l]; !ok || it.Role != "decided" || !slices.Contains(it.FoundIn, FoundStore) {
			t.Errorf("decided label %s: %+v (listed %v)", l, it, ok)
		}
	}

	f, out, _ = cmdutil.NewTestFactory(false)
	cmd = NewCmdStatus(f, nil)
	cmd.SetArgs([]string{st1.Decided.Label, "-c", j.Config, "-o", "json"})
	cmd.SetOut(out)
	cmd.SetContext(ctx)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var res StatusResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if len(res.Store) != 1 || res.Store[0].Scope != "1" || res.Store[0].Checkpoint != st1.Decided.ID {
		t.Errorf("label status of slot 1's label: store %+v (%s)", res.Store, res.StoreError)
	}
}
