package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Exit codes, all of them: main exits with ExitCode(err) for the error a
// command returned; only `run`'s failpoint crash exits directly (with
// ExitCrashed). docs/operations.md lists them.
const (
	// ExitOK: success.
	ExitOK = 0
	// ExitError: the command failed (Doris, Kafka, store errors...).
	ExitError = 1
	// ExitUsage: bad flags or arguments (*FlagError); usage is printed.
	ExitUsage = 2
	// ExitConfig: the configuration is invalid (config errors).
	ExitConfig = 3
	// ExitCheckFailed: `check` found at least one blocker (*CheckFailedError).
	ExitCheckFailed = 4
	// ExitGaps: `verify` found gaps between ledger, Doris and Kafka, or
	// `reconcile` found the served table and its audit disagree
	// (*GapsError).
	ExitGaps = 5
	// ExitNotConfirmed: a risky act was refused: no --yes without a
	// terminal, or the operator did not confirm (*NotConfirmedError).
	ExitNotConfirmed = 6
	// ExitInterrupted: cancelled by SIGINT/SIGTERM (128+SIGINT); for
	// `run`, a second signal.
	ExitInterrupted = 130
	// ExitCrashed: `run` ended at a failpoint crash, without cleanup, like
	// kill -9 (128+SIGKILL). Not mapped from an error: the crash hook exits.
	ExitCrashed = 137
)

// FlagError is a usage error: bad flags, arguments or their combination.
// It is the only error for which usage is printed.
type FlagError struct{ Err error }

// Error returns the underlying message.
func (e *FlagError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a *FlagError with a formatted message.
func FlagErrorf(format string, a ...any) error {
	return &FlagError{Err: fmt.Errorf(format, a...)}
}

// CheckFailedError is returned by `check` when at least one check failed.
type CheckFailedError struct{ Failed int }

// Error says how many checks failed.
func (e *CheckFailedError) Error() string {
	return fmt.Sprintf("%d check(s) failed", e.Failed)
}

// GapsError is returned by `verify` when it found gaps.
type GapsError struct{ Gaps int }

// Error says how many gaps were found.
func (e *GapsError) Error() string { return fmt.Sprintf("%d gap(s) found", e.Gaps) }

// NotConfirmedError is a risky act that was not confirmed.
type NotConfirmedError struct {
	// Action describes the act, e.g. "commit txn 1001 in db demo".
	Action string
	// Interactive is false when the refusal is for lack of a terminal.
	Interactive bool
}

// Error says what was refused and how to confirm.
func (e *NotConfirmedError) Error() string {
	if e.Interactive {
		return "not confirmed: " + e.Action
	}
	return "refusing to " + e.Action + " without --yes when not running interactively"
}

// ExitCode maps err to the exit code; the one place where this happens.
func ExitCode(err error) int {
	var (
		fe *FlagError
		ce *CheckFailedError
		ge *GapsError
		ne *NotConfirmedError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &fe):
		return ExitUsage
	case errors.As(err, &ce):
		return ExitCheckFailed
	case errors.As(err, &ge):
		return ExitGaps
	case errors.As(err, &ne):
		return ExitNotConfirmed
	case config.IsConfigError(err):
		return ExitConfig
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitError
	}
}

// Hint returns a one-line suggestion for err, or "".
func Hint(err error) string {
	var ne *NotConfirmedError
	switch {
	case errors.As(err, &ne) && !ne.Interactive:
		return "pass --yes to confirm, or --dry-run to see what would happen"
	case config.IsConfigError(err):
		return "see docs/configuration.md for every key, its default and the Flink aliases"
	}
	return ""
}
