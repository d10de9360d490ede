// Package version implements `doris-sink version`.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// Options are the inputs of `doris-sink version`.
type Options struct {
	IO      *cmdutil.IOStreams
	Version string
	Output  string
	// GoVersion is the toolchain that built the binary (runtime.Version;
	// tests set another).
	GoVersion string
}

// Info is the JSON output of `doris-sink version -o json`.
type Info struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// TestedGo is the toolchain doris-sink is tested with (cmdutil.TestedGo).
	TestedGo string `json:"tested_go"`
	// Warning is set when Go is older than TestedGo.
	Warning string `json:"warning,omitempty"`
}

// NewCmdVersion returns the version command; runF replaces Run in tests.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Version: f.Version, GoVersion: runtime.Version()}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the doris-sink version",
		Args:    cobra.NoArgs,
		Example: "  $ doris-sink version\n  $ doris-sink version -o json",
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run prints the version, and a warning on stderr when the binary was built
// with an older toolchain than the tested one.
func Run(o *Options) error {
	gov := o.GoVersion
	if gov == "" {
		gov = runtime.Version()
	}
	info := Info{Version: o.Version, Go: gov, TestedGo: cmdutil.TestedGo, Warning: cmdutil.ToolchainWarning(gov)}
	if info.Version == "" {
		info.Version = "dev"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, info)
	}
	if info.Warning != "" {
		fmt.Fprintf(o.IO.ErrOut, "warning: %s\n", info.Warning)
	}
	_, err := fmt.Fprintf(o.IO.Out, "doris-sink %s (%s)\n", info.Version, info.Go)
	return err
}
