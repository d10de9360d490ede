// Command doris-sink loads streaming data into Apache Doris exactly once
// (Stream Load two-phase commit) and operates the jobs that do it. See
// docs/configuration.md and `doris-sink --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/root"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f := &cmdutil.Factory{
		IO: &cmdutil.IOStreams{
			In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
			IsTTY: isTerminal(os.Stdin) && isTerminal(os.Stdout),
		},
		Environ: os.Environ,
		Version: version,
		Now:     time.Now,
	}
	code := root.Main(ctx, os.Args[1:], f)
	stop()
	os.Exit(code)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
