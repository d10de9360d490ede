package run

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// doris.sub_loads 2 with the Kafka coordinator: `run` loads the two
// partitions of orders through two sub-loads (partition p → sub-load p),
// each its own txn and label in the decisions of the state topic; a crash
// right after a decision and a restart leave every record loaded once.
func TestRunSubLoads(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.subLoads = 2
	dir := filepath.Join(e.dir, "data")
	e.produce(12)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash().Skip(1)); err != nil {
		t.Fatal(err)
	}
	job, err := e.buildWithDeps(dir, func(d *Deps) { d.Failpoints = fps })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("run: %v, want a crash after the second decision\nlogs:\n%s", err, e.logs.String())
	}
	e.produce(8)
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
	sn, err := coordlog.ReadSnapshot(ctx, coordJob, []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _, err := sn.StateOf("")
	if err != nil || st.Decided == nil {
		t.Fatalf("state: %+v %v", st, err)
	}
	both := 0
	for _, d := range append(slices.Clone(st.History), *st.Decided) {
		var subs []int
		for _, tx := range d.Txns {
			l, err := label.Parse(tx.Label)
			if err != nil || l.Sub != tx.Sub || tx.Subs != 2 {
				t.Errorf("checkpoint %d txn %+v: label %+v (%v), want its sub-load and subs 2", d.ID, tx, l, err)
			}
			subs = append(subs, tx.Sub)
		}
		if slices.Equal(subs, []int{0, 1}) {
			both++
		}
	}
	if both == 0 {
		t.Fatalf("no decision loaded both sub-loads: %+v", st.History)
	}
}
