package check

import (
	"math"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/label"
)

// checkLabels shows the longest label the job can produce (docs/design.md §3).
func checkLabels(r *Report, cfg *config.Config) {
	l, err := label.Build(cfg.Job.Name, cfg.Doris.Database, cfg.Doris.Table, "0", math.MaxUint64)
	if err != nil {
		r.add(Fail, "label prefix", "%v", err)
		return
	}
	tag := label.TableTag(cfg.Doris.Database, cfg.Doris.Table)
	note := ""
	if tag != cfg.Doris.Database+"-"+cfg.Doris.Table {
		note = " (table tag hashed: names contain characters outside [A-Za-z0-9_] or are too long)"
	}
	r.add(OK, "label prefix", "labels look like %s:%s:0:<checkpoint>, at most %d of %d characters%s",
		cfg.Job.Name, tag, len(l), label.MaxLen, note)
}
