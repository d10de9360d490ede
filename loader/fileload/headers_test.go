package fileload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A CSV load with a line_delimiter other than "\n" (Doris splits rows on
// any delimiter string: be/src/vec/exec/format/csv/csv_reader.cpp) would be
// cut into chunks on '\n', each file/piece ending in an added '\n': cuts
// inside rows, a file's last row glued to the next file's first. It is
// refused before anything begins (headers.go splittable), naming the
// header; so are enclose (a quoted value may hold '\n'), `\r\n` (a value
// may hold a bare '\n') and a raw newline (HTTP refuses it).
func TestCustomLineDelimiterRefusedBeforeAnythingBegins(t *testing.T) {
	t.Parallel()
	for _, h := range []map[string]string{
		{"line_delimiter": "|", "max_filter_ratio": "1"},
		{"Line_Delimiter": `\r\n`},
		{"line_delimiter": `\x7C`},
		{"line_delimiter": "\n"}, // raw: net/http refuses it
		{"enclose": "\"", "column_separator": ","},
	} {
		s, c := newDoris(t, ddl)
		dir, store := t.TempDir(), t.TempDir()
		// Rows separated by '|'; values hold '\n' (legal with a custom
		// line delimiter). Two files, no trailing delimiter on each.
		var a, b bytes.Buffer
		for k := 0; k < 20; k++ {
			w := &a
			if k >= 10 {
				w = &b
			}
			if k != 0 && k != 10 {
				w.WriteByte('|')
			}
			fmt.Fprintf(w, "%d\tline\nnext-%d", k, k)
		}
		o := opts(c, store, writeFile(t, dir, "a.csv", a.Bytes()), writeFile(t, dir, "b.csv", b.Bytes()))
		o.Headers = h
		o.Workers, o.ChunkBytes = 3, 16
		_, err := Run(ctx(t), o)
		txns, terr := s.Txns("demo")
		if terr != nil {
			t.Fatal(terr)
		}
		if err == nil || len(txns) != 0 {
			t.Fatalf("Run with headers %q = %v after %d txns: want it refused before any Stream Load", h, err, len(txns))
		}
		var name string
		for k := range h {
			if k != "max_filter_ratio" && k != "column_separator" {
				name = strings.ToLower(k)
			}
		}
		if !strings.Contains(err.Error(), "header "+name) {
			t.Fatalf("Run with headers %q = %v: want the refusal to name header %s", h, err, name)
		}
	}
	// The default delimiter, spelled out as Doris reads it
	// (fe Separator.java: `\n` unescaped, `\x0A` hex), is accepted.
	for _, v := range []string{`\n`, `\x0A`} {
		s, c := newDoris(t, ddl)
		dir, store := t.TempDir(), t.TempDir()
		o := opts(c, store, csvFile(t, dir, "a.csv", 0, 20, true))
		o.Headers = map[string]string{"line_delimiter": v}
		if _, err := Run(ctx(t), o); err != nil {
			t.Fatalf("Run with line_delimiter %s: %v", v, err)
		}
		wantExactlyOnce(t, s, 20)
	}
}

// skip_lines (be/src/http/action/stream_load.cpp HTTP_SKIP_LINES →
// TStreamLoadPutRequest.skip_lines; be/src/vec/exec/format/csv/
// csv_reader.cpp skips them at the start of the range, i.e. of each Stream
// Load body) would make each of the W worker bodies lose its first N lines
// (the first line of a chunk in the middle of a file is a data row) and
// load the header line of a body's second file as a row. The emulator
// ignores the header, so only the refusal before anything begins is
// asserted here.
func TestSkipLinesRefusedBeforeAnythingBegins(t *testing.T) {
	t.Parallel()
	s, c := newDoris(t, ddl)
	dir, store := t.TempDir(), t.TempDir()
	o := opts(c, store, csvFile(t, dir, "a.csv", 0, 100, true), csvFile(t, dir, "b.csv", 100, 200, true))
	o.Headers = map[string]string{"skip_lines": "1"}
	_, err := Run(ctx(t), o)
	txns, terr := s.Txns("demo")
	if terr != nil {
		t.Fatal(terr)
	}
	if err == nil || len(txns) != 0 {
		t.Fatalf("Run with skip_lines = %v after %d txns: want it refused before any Stream Load (each of the %d "+
			"worker bodies would lose its first line on a real BE)", err, len(txns), o.Workers)
	}
	if !strings.Contains(err.Error(), "header skip_lines") {
		t.Fatalf("Run with skip_lines = %v: want the refusal to name the header", err)
	}
}
