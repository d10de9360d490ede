//go:build nodev

package root

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// sandboxCommands is empty in a -tags nodev build: no demo, dev or bench,
// and no emulator or in-process Kafka linked in.
func sandboxCommands(*cmdutil.Factory) []*cobra.Command { return nil }
