package drift

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

const ddl = "CREATE TABLE t (v VARCHAR(8), id BIGINT, n INT NOT NULL, amount DECIMAL(12,2)) UNIQUE KEY(id) " +
	`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`

func table(t *testing.T) *schema.Table {
	t.Helper()
	tb, err := schema.ParseCreateTable(ddl)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func cfgWith(props map[string]string, format string) *config.Config {
	return &config.Config{Doris: config.Doris{Database: "demo", Table: "t", Properties: props}, Records: config.Records{Format: format}}
}

func names(cs []schema.Column) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// Under Doris's default strict_mode=false a conversion error loads NULL
// into a nullable column (docs/doris-facts.md §12; regression suite
// test_stream_load_strict_mode_and_filter_ratio.groovy): key columns are
// named first, NOT NULL columns never (they are filtered in both modes).
func TestAnalyzeNonStrictNamesKeysFirst(t *testing.T) {
	t.Parallel()
	r := Analyze(table(t), cfgWith(nil, config.RecordsJSON))
	if r.Strict || r.Keys != 1 || !slices.Equal(names(r.NullOnError), []string{"id", "v", "amount"}) {
		t.Errorf("report %+v", r)
	}
	msg := r.StrictMessage()
	for _, w := range []string{"strict_mode is false", "key columns first: id BIGINT", "v VARCHAR(8)", `strict_mode: "true"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	if strings.Contains(msg, "n INT") {
		t.Errorf("message names a NOT NULL column: %q", msg)
	}
	if !slices.Equal(r.Fields, []string{"v", "id", "n", "amount"}) {
		t.Errorf("fields %v", r.Fields)
	}
	s := Analyze(table(t), cfgWith(map[string]string{"strict_mode": "TRUE"}, config.RecordsJSON))
	if !s.Strict || s.NullOnError != nil || !strings.Contains(s.StrictMessage(), "never turns into NULL") {
		t.Errorf("strict report %+v", s)
	}
}

// JSON keys are matched against the "columns" header's source names when
// set; jsonpaths and csv leave nothing to match.
func TestAnalyzeFields(t *testing.T) {
	t.Parallel()
	r := Analyze(table(t), cfgWith(map[string]string{"columns": "id, `v`, tmp, amount=tmp*2"}, config.RecordsJSON))
	if !slices.Equal(r.Fields, []string{"id", "v", "tmp"}) {
		t.Errorf("fields with columns: %v", r.Fields)
	}
	if r := Analyze(table(t), cfgWith(map[string]string{"jsonpaths": `["$.id"]`}, config.RecordsJSON)); r.Fields != nil {
		t.Errorf("fields with jsonpaths: %v", r.Fields)
	}
	if r := Analyze(table(t), cfgWith(nil, config.RecordsCSV)); r.Fields != nil || len(r.NullOnError) == 0 {
		t.Errorf("csv: %+v", r)
	}
}

type tableReader struct {
	t   *schema.Table
	err error
}

func (r tableReader) ShowCreateTable(context.Context, string, string) (*schema.Table, error) {
	return r.t, r.err
}

// The start-up log warns once about NULLs on type errors and returns the
// field names to watch; an unreadable table is one warning and nil.
func TestStartupLogs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	fields := Startup(t.Context(), tableReader{t: table(t)}, cfgWith(nil, config.RecordsJSON), log)
	if !slices.Equal(fields, []string{"v", "id", "n", "amount"}) {
		t.Errorf("fields %v", fields)
	}
	if out := buf.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "key columns first: id BIGINT") {
		t.Errorf("log %q", out)
	}
	buf.Reset()
	if f := Startup(t.Context(), tableReader{err: errors.New("boom")}, cfgWith(nil, config.RecordsJSON), log); f != nil ||
		!strings.Contains(buf.String(), "drift not checked") {
		t.Errorf("unreadable table: %v %q", f, buf.String())
	}
}
