package dev

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// devURLHost is the host name in every URL `dev` prints and in the FE's
// redirects: the listeners are on loopback, and one name for FE and BEs
// means Go's client does not drop Authorization on the 307.
const devURLHost = "127.0.0.1"

// addBackendFlags adds the multi-BE and ingest-model flags.
func addBackendFlags(cmd *cobra.Command, o *Options) {
	fl := cmd.Flags()
	fl.IntVar(&o.Backends, "backends", 1, "number of BEs; BE i listens on the --be-http port + i (all ephemeral with port 0)")
	fl.Float64Var(&o.LoadMBps, "be-load-mbps", 0, "per-load ingest ceiling in MB/s (10^6 bytes); 0 = unlimited")
	fl.IntVar(&o.BEConcurrentLoads, "be-concurrent-loads", 0, "Stream Loads one BE serves at a time (more wait); 0 = unlimited")
}

// validateBackendFlags refuses out-of-range values with a usage error.
func validateBackendFlags(o *Options) error {
	if o.Backends < 1 || o.Backends > 64 {
		return cmdutil.FlagErrorf("--backends must be in [1, 64], got %d", o.Backends)
	}
	if o.LoadMBps < 0 {
		return cmdutil.FlagErrorf("--be-load-mbps must not be negative, got %g", o.LoadMBps)
	}
	if o.LoadMBps > 0 && o.LoadMBps*1e6 < 1 {
		return cmdutil.FlagErrorf("--be-load-mbps %g is below 1 byte/s", o.LoadMBps)
	}
	if o.BEConcurrentLoads < 0 {
		return cmdutil.FlagErrorf("--be-concurrent-loads must not be negative, got %d", o.BEConcurrentLoads)
	}
	return nil
}
