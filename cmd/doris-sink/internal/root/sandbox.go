//go:build !nodev

package root

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/bench"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/demo"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/dev"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// sandboxCommands are the commands that embed the Doris emulator
// (doris/doristest: go-mysql's server, TiDB parser packages, SQLite) and an
// in-process Kafka (kfake): demo, dev and bench. Building with -tags nodev
// leaves them, and that whole stack, out of the binary
// (docs/operations.md "Security").
func sandboxCommands(f *cmdutil.Factory) []*cobra.Command {
	return []*cobra.Command{
		demo.NewCmdDemo(f, nil),
		bench.NewCmdBench(f, nil),
		dev.NewCmdDev(f, nil),
	}
}
