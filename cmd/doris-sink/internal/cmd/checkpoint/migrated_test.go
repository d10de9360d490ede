package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Review finding 3: a data dir whose file store was imported into Kafka
// (job.coordinator switched from file to kafka) holds a stale file store.
// `checkpoint rebase` with job.coordinator file refuses it (dry run too,
// nothing changed), and `checkpoint show` with file says the directory was
// migrated and names the state topic where the job's state lives.
func TestRebaseAndShowSeeMigrationMarker(t *testing.T) {
	t.Parallel()
	e := newRebaseEnv(t, config.CoordinatorFile)
	e.produce(4)
	e.runTo()
	e.coord = config.CoordinatorKafka
	e.produce(2)
	e.runTo() // imports the file store, writes the marker
	e.coord = config.CoordinatorFile
	topic := coordlog.StateTopic("rb-job")
	before := readState(t, e)
	for _, dry := range []bool{true, false} {
		_, err := Rebase(context.Background(), e.config(), RebaseRequest{To: RebaseLatest, AllPartitions: true, DryRun: dry})
		var me *run.MigratedError
		if !errors.As(err, &me) || me.StateTopic != topic || !strings.Contains(err.Error(), topic) {
			t.Fatalf("rebase (dry run %v) of a migrated data dir with job.coordinator file: %v, want *run.MigratedError naming %s",
				dry, err, topic)
		}
	}
	if after := readState(t, e); after.NextID != before.NextID {
		t.Errorf("a refused rebase changed the file store: next id %d → %d", before.NextID, after.NextID)
	}

	path := e.configFile()
	show := func(args ...string) string {
		t.Helper()
		f, out, _ := cmdutil.NewTestFactory(false)
		cmd := NewCmdShow(f, nil)
		cmd.SetArgs(append([]string{"-c", path}, args...))
		cmd.SetOut(out)
		cmd.SetContext(context.Background())
		if err := cmd.Execute(); err != nil {
			t.Fatalf("checkpoint show %v: %v", args, err)
		}
		return out.String()
	}
	var r ShowResult
	if err := json.Unmarshal([]byte(show("-o", "json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Migrated == nil || r.Migrated.State != run.MarkerImported || r.Migrated.StateTopic != topic {
		t.Errorf("show -o json of a migrated data dir: migrated %+v, want imported into %s", r.Migrated, topic)
	}
	if out := show(); !strings.Contains(out, "imported into Kafka") || !strings.Contains(out, "state topic "+topic) {
		t.Errorf("show of a migrated data dir does not say so:\n%s", out)
	}
}
