// Package cmdutil holds what every doris-sink subcommand shares: the
// Factory (injected IO streams, environment, clients), exit codes mapped
// from typed errors in one place, the `-o table|json` output flag and
// printers, configuration and connection flags, and the confirmation guard
// for risky acts.
package cmdutil
