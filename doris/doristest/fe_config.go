package doristest

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// FE config keys the emulator honours, with Doris's defaults
// (docs/doris-facts.md §4 and §5, FE-CONF).
const (
	// ConfStreamLoadDefaultTimeout is the PREPARE timeout when a load has no
	// `timeout` header. Default 259200 (3 days).
	ConfStreamLoadDefaultTimeout = "stream_load_default_timeout_second"
	// ConfMaxStreamLoadTimeout is the largest accepted `timeout` header. Default 259200.
	ConfMaxStreamLoadTimeout = "max_stream_load_timeout_second"
	// ConfMinLoadTimeout is the smallest accepted `timeout` header. Default 1.
	ConfMinLoadTimeout = "min_load_timeout_second"
	// ConfPrecommitTimeout aborts PRECOMMITTED txns after this many seconds
	// with "timeout by txn manager". Default 3600.
	ConfPrecommitTimeout = "stream_load_default_precommit_timeout_second"
	// ConfLabelKeepMax is how long a final stream-load txn (and its label) is
	// kept. Default 43200 (12 h).
	ConfLabelKeepMax = "streaming_label_keep_max_second"
	// ConfLabelNumThreshold caps final txns kept per db (oldest evicted
	// first); ≤0 means time-only. Default 2000.
	ConfLabelNumThreshold = "label_num_threshold"
	// ConfMaxRunningTxnPerDB caps PREPARE+PRECOMMITTED+COMMITTED txns per db.
	// Default 1000.
	ConfMaxRunningTxnPerDB = "max_running_txn_num_per_db"
	// ConfLabelRegexLength is the maximum label length in the label regex.
	// Default 128.
	ConfLabelRegexLength = "label_regex_length"
	// ConfTxnCleanInterval is the cleaner period in real Doris. Default 30.
	// The emulator reports it but evaluates timers on every request.
	ConfTxnCleanInterval = "transaction_clean_interval_second"
	// ConfHeartbeatInterval is how long after a BE goes down or up the FE
	// notices (its heartbeat period; Doris heartbeat_interval_second with
	// max_backend_heartbeat_failure_tolerance_count 1). Default 5.
	ConfHeartbeatInterval = "heartbeat_interval_second"
)

var feConfigDefaults = map[string]int64{
	ConfStreamLoadDefaultTimeout: 259200,
	ConfMaxStreamLoadTimeout:     259200,
	ConfMinLoadTimeout:           1,
	ConfPrecommitTimeout:         3600,
	ConfLabelKeepMax:             43200,
	"label_keep_max_second":      259200,
	ConfLabelNumThreshold:        2000,
	ConfMaxRunningTxnPerDB:       1000,
	ConfLabelRegexLength:         128,
	ConfTxnCleanInterval:         30,
	ConfHeartbeatInterval:        5,
}

// FEConfigKeys lists the FE config keys the emulator knows, sorted.
func FEConfigKeys() []string {
	keys := make([]string, 0, len(feConfigDefaults))
	for k := range feConfigDefaults {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func checkFEConfig(key string, value int64) error {
	if _, ok := feConfigDefaults[key]; !ok {
		return fmt.Errorf("unknown FE config %q (known: %s)", key, strings.Join(FEConfigKeys(), ", "))
	}
	switch key {
	case ConfLabelRegexLength, ConfMaxRunningTxnPerDB, ConfStreamLoadDefaultTimeout, ConfPrecommitTimeout, ConfHeartbeatInterval:
		if value < 1 {
			return fmt.Errorf("FE config %s=%d must be positive", key, value)
		}
	}
	return nil
}

// feConf returns the current value of an FE config key. Callers hold s.mu.
func (s *Server) feConf(key string) int64 {
	if v, ok := s.conf[key]; ok {
		return v
	}
	return feConfigDefaults[key]
}

// SetFEConfig changes one FE config value at run time, like
// ADMIN SET FRONTEND CONFIG (all keys here are mutable in Doris). Values
// captured at txn creation (timeouts) are not changed for existing txns.
func (s *Server) SetFEConfig(key string, value int64) error {
	if err := checkFEConfig(key, value); err != nil {
		return fmt.Errorf("set FE config: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conf[key] = value
	return nil
}

// FEConfigValue returns the current value of an FE config key.
func (s *Server) FEConfigValue(key string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := feConfigDefaults[key]; !ok {
		return 0, false
	}
	return s.feConf(key), true
}

// frontendConfig answers ADMIN SHOW FRONTEND CONFIG [LIKE pattern]; pattern
// uses SQL LIKE wildcards (% and _), case-insensitive; empty matches all.
func (s *Server) frontendConfig(pattern string) [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	glob := likeToGlob(strings.ToLower(pattern))
	var out [][2]string
	for _, k := range FEConfigKeys() {
		if pattern != "" {
			if ok, _ := path.Match(glob, k); !ok {
				continue
			}
		}
		out = append(out, [2]string{k, strconv.FormatInt(s.feConf(k), 10)})
	}
	return out
}

// likeToGlob converts a SQL LIKE pattern to a path.Match glob.
func likeToGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '%':
			b.WriteByte('*')
		case '_':
			b.WriteByte('?')
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
