package check

import (
	"context"
	"errors"
	"io/fs"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// checkStore checks that the store (in job.data_dir, or the Kafka state
// topic with job.coordinator kafka, read-only) belongs to this job
// (docs/design.md §3, prefix ownership).
func checkStore(ctx context.Context, r *Report, cfg *config.Config) {
	dir := cfg.Job.DataDir
	var st *checkpoint.State
	var err error
	if cfg.Job.Coordinator == config.CoordinatorKafka {
		var v *jobstate.View
		if v, err = jobstate.Open(ctx, cfg); err == nil {
			st, dir = v.State, v.Where()
		}
	} else {
		st, err = checkpoint.ReadFile(dir)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && cfg.Job.Coordinator == config.CoordinatorKafka:
		r.add(OK, "store", "no checkpoint state in Kafka yet (%v): the first run creates it", err)
		return
	case errors.Is(err, fs.ErrNotExist):
		r.add(OK, "store", "no checkpoint store in %s yet: the first run creates it", dir)
		return
	case err != nil:
		r.add(Fail, "store", "%v", err)
		return
	}
	o := st.Owner
	var diffs []string
	if o.Job != cfg.Job.Name {
		diffs = append(diffs, "job "+o.Job+" ≠ "+cfg.Job.Name)
	}
	if o.DB != cfg.Doris.Database || o.Table != cfg.Doris.Table {
		diffs = append(diffs, "table "+o.DB+"."+o.Table+" ≠ "+cfg.Doris.Database+"."+cfg.Doris.Table)
	}
	if len(diffs) > 0 {
		r.add(Fail, "store", "%s belongs to another job (%v): use another job.data_dir; two writers must never share a store or a label prefix", dir, diffs)
		return
	}
	decided := "nothing decided yet"
	if d := st.Decided; d != nil {
		decided = "last decided checkpoint " + d.Label
		if !d.Committed {
			decided += " (not yet committed: the next start commits or heals it)"
		}
	}
	r.add(OK, "store", "%s belongs to this job (source %q, writer %s); %s, %d announced", dir, o.Source, o.Writer, decided, len(st.Announced))
}
