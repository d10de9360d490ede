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
}

// Info is the JSON output of `doris-sink version -o json`.
type Info struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

// NewCmdVersion returns the version command; runF replaces Run in tests.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Version: f.Version}
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

// Run prints the version.
func Run(o *Options) error {
	info := Info{Version: o.Version, Go: runtime.Version()}
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
	_, err := fmt.Fprintf(o.IO.Out, "doris-sink %s (%s)\n", info.Version, info.Go)
	return err
}
