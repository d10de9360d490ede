package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Output formats of the -o flag.
const (
	OutputTable = "table"
	OutputJSON  = "json"
)

var outputFormats = []string{OutputTable, OutputJSON}

// outputValue is the -o flag: it rejects unknown formats listing the valid
// ones.
type outputValue struct{ p *string }

func (v outputValue) String() string { return *v.p }
func (v outputValue) Type() string   { return "format" }
func (v outputValue) Set(s string) error {
	if !slices.Contains(outputFormats, s) {
		return fmt.Errorf("unknown output format %q; valid formats: %s", s, strings.Join(outputFormats, ", "))
	}
	*v.p = s
	return nil
}

// AddOutputFlag adds -o/--output (table|json, default table) writing to p.
// JSON output goes through WriteJSON with the stable field names of each
// command's result type.
func AddOutputFlag(cmd *cobra.Command, p *string) {
	*p = OutputTable
	cmd.Flags().VarP(outputValue{p}, "output", "o", "output format: table or json")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return outputFormats, cobra.ShellCompDirectiveNoFileComp
	})
}

// WriteJSON writes v as indented JSON with a trailing newline. Every `-o
// json` output goes through here.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Table prints rows: aligned columns under upper-case headers on a
// terminal, tab-separated rows without headers when piped.
type Table struct {
	io      *IOStreams
	headers []string
	rows    [][]string
}

// NewTable returns a table with the given column headers.
func NewTable(io *IOStreams, headers ...string) *Table {
	return &Table{io: io, headers: headers}
}

// AddRow adds one row; missing fields print empty.
func (t *Table) AddRow(fields ...string) { t.rows = append(t.rows, fields) }

// Render writes the table to the output stream.
func (t *Table) Render() error {
	if !t.io.IsTTY {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(t.io.Out, strings.Join(sanitize(r), "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(t.io.Out, 0, 4, 2, ' ', 0)
	if len(t.headers) > 0 {
		h := make([]string, len(t.headers))
		for i, s := range t.headers {
			h[i] = strings.ToUpper(s)
		}
		fmt.Fprintln(tw, strings.Join(h, "\t"))
	}
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(sanitize(r), "\t"))
	}
	return tw.Flush()
}

// KV prints "key: value" lines aligned on a terminal, "key\tvalue" when
// piped.
type KV struct{ t *Table }

// NewKV returns an empty key/value list.
func NewKV(io *IOStreams) *KV { return &KV{t: &Table{io: io}} }

// Add adds one pair; on a terminal the key gets a colon.
func (kv *KV) Add(key, value string) {
	if kv.t.io.IsTTY {
		key += ":"
	}
	kv.t.AddRow(key, value)
}

// Render writes the pairs.
func (kv *KV) Render() error { return kv.t.Render() }

// sanitize keeps each field on one line, free of tabs and of terminal
// control sequences (TerminalSafe).
func sanitize(r []string) []string {
	out := make([]string, len(r))
	for i, s := range r {
		out[i] = TerminalSafe(strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s))
	}
	return out
}
