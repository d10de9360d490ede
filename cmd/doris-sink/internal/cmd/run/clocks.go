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

// WarnClocks logs one warning line per Doris clock that bounds the
// exactly-once protocol, with its value when the FE answers (ADMIN SHOW
// FRONTEND CONFIG needs ADMIN; a failure is one warning, never fatal).
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
	if d, ok := seconds(precommitTimeoutKey); ok {
		lvl := slog.LevelInfo
		if cfg.Delivery.CheckpointInterval*2 > d {
			lvl = slog.LevelWarn
		}
		log.Log(ctx, lvl, "Doris clock: a PRECOMMITTED txn is aborted after "+precommitTimeoutKey+
			"; a decided checkpoint must be committed before it (a stopped job heals on restart)",
			"value", d.String(), "checkpoint_interval", cfg.Delivery.CheckpointInterval.String())
	}
	if d, ok := seconds(labelKeepKey); ok {
		log.Warn("Doris clock: stream-load labels are forgotten after "+labelKeepKey+
			"; a job stopped longer than this with an uncommitted decision needs `checkpoint resolve`", "value", d.String())
	}
	if v, ok := vals[labelNumKey]; ok {
		log.Warn("Doris clock: at most "+labelNumKey+" finished labels are kept per database; "+
			"a busy database forgets labels sooner than "+labelKeepKey, "value", v)
	}
	if v, ok := vals[runningTxnKey]; ok {
		log.Info("Doris limit: running txns per database ("+runningTxnKey+"); precommitted txns count", "value", v)
	}
}
