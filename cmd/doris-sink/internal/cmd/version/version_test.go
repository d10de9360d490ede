package version

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// Issue 25: a binary built with an older toolchain than the tested one
// (GOTOOLCHAIN=local on go1.26.8, a distro's Go) says so: a warning on
// stderr naming both versions, and a "warning" field in -o json. The tested
// toolchain, a newer one and an unparseable development build print none.
func TestVersionWarnsOnOlderToolchain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		built string
		warn  bool
	}{
		{"go1.26.8", true},
		{"go1.26.8 X:boringcrypto", true},
		{cmdutil.TestedGo, false},
		{"go1.28.0", false},
		{"devel go1.28-abcdef", false},
	} {
		io, out, errOut := cmdutil.TestStreams("", false)
		if err := Run(&Options{IO: io, Version: "v1", GoVersion: tc.built}); err != nil {
			t.Fatal(err)
		}
		got := errOut.String()
		if tc.warn != strings.Contains(got, "older than the tested toolchain "+cmdutil.TestedGo) ||
			(tc.warn && !strings.Contains(got, tc.built)) {
			t.Errorf("built with %q: stderr %q, want warning %t", tc.built, got, tc.warn)
		}
		if !strings.Contains(out.String(), tc.built) {
			t.Errorf("built with %q: stdout %q does not name it", tc.built, out.String())
		}
		jio, jout, _ := cmdutil.TestStreams("", false)
		if err := Run(&Options{IO: jio, Version: "v1", GoVersion: tc.built, Output: cmdutil.OutputJSON}); err != nil {
			t.Fatal(err)
		}
		var info Info
		if err := json.Unmarshal(jout.Bytes(), &info); err != nil {
			t.Fatal(err)
		}
		if info.TestedGo != cmdutil.TestedGo || (info.Warning != "") != tc.warn {
			t.Errorf("built with %q: json %+v, want tested_go %s and warning %t", tc.built, info, cmdutil.TestedGo, tc.warn)
		}
	}
}
