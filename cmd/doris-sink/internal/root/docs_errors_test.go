package root

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// docExample is a config error example of docs/configuration.md: a YAML
// block and, right after it, the block of what the binary prints.
type docExample struct {
	line       int
	yaml, want string
}

var fenceRE = regexp.MustCompile("(?m)^```([a-z]*)\n((?:.*\n)*?)```\n")

// docErrorExamples returns every block of docs/configuration.md that
// starts with "error:" with the ```yaml block before it (only blank lines
// between them); an error block without one fails the test.
func docErrorExamples(t *testing.T) []docExample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var out []docExample
	prevEnd, prevLang, prevBody := -1, "", ""
	for _, m := range fenceRE.FindAllStringSubmatchIndex(doc, -1) {
		lang, body := doc[m[2]:m[3]], doc[m[4]:m[5]]
		line := strings.Count(doc[:m[0]], "\n") + 1
		if strings.HasPrefix(body, "error:") {
			if prevLang != "yaml" || strings.TrimSpace(doc[prevEnd:m[0]]) != "" {
				t.Errorf("docs/configuration.md line %d: an error example without the ```yaml block it is the output of right before it", line)
			} else {
				out = append(out, docExample{line: line, yaml: prevBody, want: body})
			}
		}
		prevEnd, prevLang, prevBody = m[1], lang, body
	}
	return out
}

// Issue 30: every config error example of docs/configuration.md is what
// `doris-sink check -c job.yaml` prints for the YAML before it, exit 3
// (the first example claimed "exactly_once" is invalid: it is accepted).
func TestConfigurationDocErrorExamples(t *testing.T) {
	t.Parallel()
	examples := docErrorExamples(t)
	if len(examples) < 3 {
		t.Fatalf("%d error examples found in docs/configuration.md, want at least 3", len(examples))
	}
	for _, ex := range examples {
		path := filepath.Join(t.TempDir(), "job.yaml")
		if err := os.WriteFile(path, []byte(ex.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, false, "check", "-c", path)
		got := strings.ReplaceAll(r.err, path, "job.yaml")
		if r.code != cmdutil.ExitConfig || got != ex.want {
			t.Errorf("docs/configuration.md line %d: doris-sink check prints (exit %d)\n%s\nthe doc says (exit %d)\n%s",
				ex.line, r.code, got, cmdutil.ExitConfig, ex.want)
		}
	}
}
