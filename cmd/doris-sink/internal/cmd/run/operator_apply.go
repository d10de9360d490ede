package run

import (
	"context"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// ApplyOperator applies a pending operator record (`checkpoint resolve`
// with job.coordinator kafka) through st, the job's own fenced store, as a
// start does before recovery: only while it names the decided checkpoint,
// re-checked against Doris (d.Doris), with a "resolved" ledger entry in
// job.data_dir. `checkpoint rebase` uses it: it opens the job's store as
// its writer, and a job refused at start (a recreated topic) never gets to
// apply the record itself.
func ApplyOperator(ctx context.Context, st *coordlog.Store, cfg *config.Config, d Deps) error {
	return applyOperator(ctx, st, cfg, d)
}
