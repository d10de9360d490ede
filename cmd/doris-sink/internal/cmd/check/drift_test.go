package check

import (
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// Issue 11: `{"id":"x"}` into a BIGINT key loads as NULL under Doris's
// default strict_mode=false and check did not say so. It warns, naming the
// key column first; with strict_mode true it is OK.
func TestCheckDriftWarnsAboutNullOnTypeError(t *testing.T) {
	t.Parallel()
	tb, err := schema.ParseCreateTable("CREATE TABLE t (id BIGINT, v VARCHAR(8)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Doris: config.Doris{Database: "demo", Table: "t"}, Records: config.Records{Format: config.RecordsJSON}}
	var r Report
	checkDrift(&r, cfg, tb)
	if r.Warned != 1 || r.Lines[0].Check != "type errors" || !strings.Contains(r.Lines[0].Detail, "key columns first: id BIGINT") {
		t.Errorf("non-strict: %+v", r)
	}
	if len(r.Lines) != 2 || !strings.Contains(r.Lines[1].Detail, "id, v") || !strings.Contains(r.Lines[1].Detail, "doris_sink_unknown_fields_total") {
		t.Errorf("json fields line: %+v", r.Lines)
	}
	cfg.Doris.Properties = map[string]string{"strict_mode": "true"}
	r = Report{}
	checkDrift(&r, cfg, tb)
	if r.Warned != 0 || r.Lines[0].Status != OK {
		t.Errorf("strict: %+v", r)
	}
}
