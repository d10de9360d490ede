package cmdutil

import (
	"os"
	"regexp"
	"testing"
)

// TestedGo, go.mod's toolchain line and .ci/run's GOTOOLCHAIN name the
// same toolchain (issue 25: a plain go build must pick the tested one).
func TestTestedGoMatchesGoModAndCI(t *testing.T) {
	t.Parallel()
	for file, re := range map[string]*regexp.Regexp{
		"../../../../go.mod":  regexp.MustCompile(`(?m)^toolchain (go\S+)$`),
		"../../../../.ci/run": regexp.MustCompile(`(?m)^export GOTOOLCHAIN=(go\S+)$`),
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil || string(m[1]) != TestedGo {
			t.Errorf("%s names %q, want %s (cmdutil.TestedGo)", file, m, TestedGo)
		}
	}
	if ToolchainWarning("go1.26.8") == "" || ToolchainWarning(TestedGo) != "" {
		t.Error("ToolchainWarning: wrong answer for go1.26.8 or the tested toolchain")
	}
}
