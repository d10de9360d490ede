package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/bench"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/check"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/checkpoint"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/dev"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/label"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/reconcile"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/status"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/txn"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/version"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/loader/fileload"
)

// jsonOutputs are the result types every `-o json` writes, by command, as
// docs/operations.md ("Scripting with -o json") lists them.
var jsonOutputs = []struct {
	command string
	typ     reflect.Type
}{
	{"check", reflect.TypeFor[check.Report]()},
	{"checkpoint show", reflect.TypeFor[checkpoint.ShowResult]()},
	{"checkpoint resolve", reflect.TypeFor[checkpoint.ResolveResult]()},
	{"checkpoint rebase", reflect.TypeFor[checkpoint.RebaseResult]()},
	{"checkpoint reslot", reflect.TypeFor[checkpoint.ReslotResult]()},
	{"dev", reflect.TypeFor[dev.Endpoints]()},
	{"label list", reflect.TypeFor[label.ListItem]()},
	{"label status", reflect.TypeFor[label.StatusResult]()},
	{"txn status", reflect.TypeFor[view.Txn]()},
	{"txn commit|abort", reflect.TypeFor[txn.DecideResult]()},
	{"verify", reflect.TypeFor[verify.Report]()},
	{"reconcile", reflect.TypeFor[reconcile.Report]()},
	{"bench", reflect.TypeFor[bench.Result]()},
	{"version", reflect.TypeFor[version.Info]()},
	{"status", reflect.TypeFor[status.Result]()},
	{"load", reflect.TypeFor[fileload.Result]()},
}

var jsonName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Every field of every -o json output has an explicit snake_case JSON
// name (a renamed Go field must not rename the output), and
// docs/operations.md names each command's top-level fields.
func TestJSONOutputFieldNamesAreStableAndDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := string(b)
	for _, o := range jsonOutputs {
		top := checkJSONNames(t, o.typ, o.command, map[reflect.Type]bool{})
		row := docRow(docs, o.command)
		if row == "" {
			t.Errorf("docs/operations.md has no -o json row for %q", o.command)
			continue
		}
		for _, name := range top {
			if !strings.Contains(row, "`"+name+"`") {
				t.Errorf("docs/operations.md row %q lacks field `%s`", o.command, name)
			}
		}
	}
}

// docRow returns the table row of docs/operations.md whose first cell is
// `doris-sink <command>` (a Markdown-escaped \| reads as |).
func docRow(docs, command string) string {
	for line := range strings.SplitSeq(docs, "\n") {
		if strings.HasPrefix(strings.ReplaceAll(line, `\|`, "|"), "| `doris-sink "+command+"`") {
			return line
		}
	}
	return ""
}

// checkJSONNames checks the JSON names of t's fields, recursively, and
// returns its top-level names.
func checkJSONNames(t *testing.T, typ reflect.Type, path string, seen map[reflect.Type]bool) []string {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || seen[typ] || typ == reflect.TypeFor[time.Time]() {
		return nil
	}
	if typ.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Marshaler]()) {
		return nil
	}
	seen[typ] = true
	var names []string
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "":
			names = append(names, checkJSONNames(t, f.Type, path, seen)...)
			continue
		case !ok || !jsonName.MatchString(name):
			t.Errorf("%s.%s: JSON name %q, want an explicit snake_case json tag", path, f.Name, name)
		}
		names = append(names, name)
		checkJSONNames(t, f.Type, path+"."+name, seen)
	}
	return slices.Compact(names)
}
