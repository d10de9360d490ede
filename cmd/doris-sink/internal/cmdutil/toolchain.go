package cmdutil

import (
	"fmt"
	"go/version"
	"strings"
)

// TestedGo is the Go toolchain doris-sink is tested and released with:
// go.mod's toolchain line and .ci/run's GOTOOLCHAIN. Older toolchains
// (go1.26.8 and before) have reachable standard-library vulnerabilities
// (docs/operations.md "Toolchain and vulnerabilities").
const TestedGo = "go1.27.3"

// ToolchainWarning returns a warning when built is an older Go release
// than TestedGo, and "" otherwise (TestedGo or newer, or a development
// build whose version cannot be compared). built is a runtime.Version()
// string (the toolchain that built this binary); a distro's suffix after a space ("go1.26.8 X:…") is ignored.
func ToolchainWarning(built string) string {
	v, _, _ := strings.Cut(built, " ")
	if !version.IsValid(v) || version.Compare(v, TestedGo) >= 0 {
		return ""
	}
	return fmt.Sprintf("built with %s, older than the tested toolchain %s: rebuild with GOTOOLCHAIN=%s "+
		"(or GOTOOLCHAIN=auto, which go.mod's toolchain line then selects); older toolchains have reachable "+
		"standard-library vulnerabilities (docs/operations.md \"Toolchain and vulnerabilities\")", built, TestedGo, TestedGo)
}
