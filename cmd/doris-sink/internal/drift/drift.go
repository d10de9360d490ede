// Package drift says where Doris changes what a job loads without failing
// the load: non-strict mode (Doris's default strict_mode=false) turns a
// value that cannot be converted to its column's type into NULL, and a
// JSON field that matches no column is ignored (docs/doris-facts.md §12).
// `doris-sink check` prints it; `run` logs it at start-up and counts the
// ignored fields (kafka.WithTableColumns).
package drift

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// Report is what Doris will do silently to the job's rows.
type Report struct {
	// Strict is true when doris.properties.strict_mode is "true".
	Strict bool
	// NullOnError lists, under non-strict mode, the nullable columns a
	// failed conversion loads as NULL: key columns first, then the others
	// in table order (any format). Nil under strict mode.
	NullOnError []schema.Column
	// Keys counts the key columns at the head of NullOnError.
	Keys int
	// Fields are the names JSON keys must match (Doris matches them
	// exactly): the "columns" property's names when set, else the table's
	// columns. Nil when the mapping cannot be told (jsonpaths) or the format
	// is csv.
	Fields []string
}

// Analyze reads the table and the job's load properties.
func Analyze(t *schema.Table, cfg *config.Config) Report {
	props := cfg.Doris.Properties
	r := Report{Strict: strings.EqualFold(strings.TrimSpace(props["strict_mode"]), "true")}
	json := cfg.Records.Format != config.RecordsCSV
	if !r.Strict {
		for _, c := range t.Columns {
			if c.Nullable && t.IsKey(c.Name) {
				r.NullOnError = append(r.NullOnError, c)
			}
		}
		r.Keys = len(r.NullOnError)
		for _, c := range t.Columns {
			if c.Nullable && !t.IsKey(c.Name) {
				r.NullOnError = append(r.NullOnError, c)
			}
		}
	}
	r.Fields = Fields(t, json, props)
	return r
}

// Fields are the names of the JSON fields a load into t reads (for
// kafka.WithTableColumns and kafka.WithRoutedTableColumns): the source
// names of the "columns" property when set, else t's columns; nil (not
// checked) for CSV or with "jsonpaths" (fields are picked by path).
func Fields(t *schema.Table, json bool, props map[string]string) []string {
	if !json || props["jsonpaths"] != "" {
		return nil
	}
	if cols := props["columns"]; cols != "" {
		return columnNames(cols)
	}
	fields := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		fields = append(fields, c.Name)
	}
	return fields
}

// columnNames returns the source names of a Stream Load "columns" header
// ("k1,k2,tmp,v=tmp*2" → k1, k2, tmp): a mapped column v=expr is not read
// from the row, its inputs are.
func columnNames(header string) []string {
	var out []string
	for _, part := range strings.Split(header, ",") {
		if strings.Contains(part, "=") {
			continue
		}
		if n := strings.Trim(strings.TrimSpace(part), "`"); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// StrictMessage explains the strict-mode finding in one line.
func (r Report) StrictMessage() string {
	if r.Strict {
		return "strict_mode is true: a value that cannot be converted to its column's type makes its row filtered " +
			"(the load fails beyond max_filter_ratio), it never turns into NULL"
	}
	if len(r.NullOnError) == 0 {
		return "strict_mode is false (Doris's default), but every column is NOT NULL: a value that cannot be converted " +
			"makes its row filtered (the load fails beyond max_filter_ratio)"
	}
	var b strings.Builder
	b.WriteString("strict_mode is false (Doris's default): a value that cannot be converted to its column's type loads as NULL, silently")
	if r.Keys > 0 {
		fmt.Fprintf(&b, "; key columns first: %s (a NULL key merges unrelated rows into one key)", list(r.NullOnError[:r.Keys]))
	}
	if rest := r.NullOnError[r.Keys:]; len(rest) > 0 {
		fmt.Fprintf(&b, "; other nullable columns: %s", list(rest))
	}
	b.WriteString(`; set doris.properties.strict_mode: "true" to have such rows filtered instead (they fail the load at max_filter_ratio 0)`)
	return b.String()
}

func list(cs []schema.Column) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + " " + c.Type
	}
	return strings.Join(parts, ", ")
}

// TableReader reads a table's schema (*doris.Client).
type TableReader interface {
	ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error)
}

// Startup reads the table, logs the strict-mode finding (a warning when
// type errors turn into NULLs) and returns the field names for
// kafka.WithTableColumns; nil (nothing watched) when the table cannot be
// read, which is logged and never fatal.
func Startup(ctx context.Context, tr TableReader, cfg *config.Config, log *slog.Logger) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := tr.ShowCreateTable(ctx, cfg.Doris.Database, cfg.Doris.Table)
	if err != nil {
		log.Warn("drift not checked: cannot read the table (type errors may load as NULL, unknown JSON fields are not counted)",
			"table", cfg.Doris.Database+"."+cfg.Doris.Table, "err", err)
		return nil
	}
	r := Analyze(t, cfg)
	if r.Strict || len(r.NullOnError) == 0 {
		log.Info(r.StrictMessage(), "table", cfg.Doris.Database+"."+cfg.Doris.Table)
	} else {
		log.Warn(r.StrictMessage(), "table", cfg.Doris.Database+"."+cfg.Doris.Table)
	}
	return r.Fields
}
