package txn

import (
	"strconv"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader"
)

// Issue 12: with job.coordinator kafka the `txn abort` guard read
// job.data_dir, found no store and only warned. It reads the state topic
// now: aborting the decided txn is refused as with the file store.
func TestTxnGuardReadsKafkaState(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, 20, 5)
	d := j.State().Decided
	wantOwnedRefusal(t, decide(j, Abort, strconv.FormatInt(d.TxnID, 10), "--yes"), "txn commit")
}
