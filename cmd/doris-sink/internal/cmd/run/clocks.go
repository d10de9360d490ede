package run

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// FrontendConfigReader reads FE config values (*doris.Client).
type FrontendConfigReader interface {
	FrontendConfig(ctx context.Context, pattern string) (map[string]string, error)
}

// Doris clocks that bound the protocol (docs/design.md §2; docs/doris-facts.md §4, §5).
const (
	precommitTimeoutKey = "stream_load_default_precommit_timeout_second"
	labelKeepKey        = "streaming_label_keep_max_second"
	labelNumKey         = "label_num_threshold"
	runningTxnKey       = "max_running_txn_num_per_db"
)

// Doris's defaults of the clocks (docs/doris-facts.md §4, §5): a value
// below one makes the job forget or abort sooner than the docs assume.
const (
	defaultLabelKeep = 12 * time.Hour
	defaultLabelNum  = 2000
)

// WarnClocks reads the Doris clocks that bound the exactly-once protocol
// and logs one warning line per clock that puts the job at risk: the
// precommit timeout under twice delivery.checkpoint_interval, a label
// retention or label count below Doris's default. A healthy start logs one
// line with every value. ADMIN SHOW FRONTEND CONFIG needs ADMIN; a failure
// is one warning, never fatal.
func WarnClocks(ctx context.Context, fe FrontendConfigReader, cfg *config.Config, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	vals := map[string]string{}
	for _, k := range []string{precommitTimeoutKey, labelKeepKey, labelNumKey, runningTxnKey} {
		m, err := fe.FrontendConfig(ctx, k)
		if err != nil {
			log.Warn("Doris clocks not checked: cannot read FE config (needs ADMIN; run `doris-sink check`)", "err", err)
			return
		}
		if v, ok := m[k]; ok {
			vals[k] = v
		}
	}
	seconds := func(k string) (time.Duration, bool) {
		n, err := strconv.ParseInt(vals[k], 10, 64)
		return time.Duration(n) * time.Second, err == nil
	}
	warned := false
	if d, ok := seconds(precommitTimeoutKey); ok && cfg.Delivery.CheckpointInterval*2 > d {
		warned = true
		log.Warn("Doris clock: a PRECOMMITTED txn is aborted after "+precommitTimeoutKey+
			", less than twice delivery.checkpoint_interval: a decided checkpoint must be committed before it (a stopped "+
			"job heals on restart)", "value", d.String(), "checkpoint_interval", cfg.Delivery.CheckpointInterval.String())
	}
	if d, ok := seconds(labelKeepKey); ok && d < defaultLabelKeep {
		warned = true
		log.Warn("Doris clock: stream-load labels are forgotten after "+labelKeepKey+", below Doris's default "+
			defaultLabelKeep.String()+": a job stopped longer than this with an uncommitted decision needs "+
			"`checkpoint resolve`", "value", d.String())
	}
	if n, err := strconv.ParseInt(vals[labelNumKey], 10, 64); err == nil && n < defaultLabelNum {
		warned = true
		log.Warn("Doris clock: at most "+labelNumKey+" finished labels are kept per database, below Doris's default "+
			strconv.Itoa(defaultLabelNum)+": a busy database forgets labels sooner than "+labelKeepKey, "value", n)
	}
	args := []any{"checkpoint_interval", cfg.Delivery.CheckpointInterval.String()}
	for _, k := range []string{precommitTimeoutKey, labelKeepKey, labelNumKey, runningTxnKey} {
		if v, ok := vals[k]; ok {
			args = append(args, k, v)
		}
	}
	msg := "Doris clocks checked: the job is within them (precommitted txns count towards " + runningTxnKey + ")"
	if warned {
		msg = "Doris clocks checked (see the warnings above)"
	}
	log.Info(msg, args...)
}
