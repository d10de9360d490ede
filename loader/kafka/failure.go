package kafka

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// failureRun is the current run of failures of the Connector: consecutive
// failed checkpoints, recoveries and start-up look-ups since the last
// progress (a decided checkpoint, or the start of reading). It drives the
// backoff (exponential in n), the stall report, and fail-fast: a cause
// that retrying cannot fix ends Run once it has persisted for the
// fail-fast grace (WithFailFastAfter). Used by the Run goroutine only.
type failureRun struct {
	n    int   // failures in this run
	last error // the latest failure
	// kind is the unfixable cause of the latest failures ("" when the
	// latest failure is transient) and since when it has persisted.
	kind  string
	since time.Time
}

// unfixable is a failure that retrying cannot fix: the configuration, a
// grant, the table or the topic has to change. kind groups failures for
// the grace clock; what names the thing, fix says what to change.
type unfixable struct {
	kind, what, fix string
}

// errTopicMissing: the topic has no partitions (it does not exist).
var errTopicMissing = errors.New("topic does not exist")

// unfixableOf classifies err (errors.Is on the Doris client's and Kafka's
// typed errors, never on message text).
func unfixableOf(err error, topic string) (unfixable, bool) {
	switch {
	case errors.Is(err, doris.ErrUnauthorized):
		return unfixable{kind: "doris-auth",
			what: "Doris refused the credentials of doris.user",
			fix:  "fix doris.user and doris.password (or doris.password_file), and grant LOAD on the table"}, true
	case errors.Is(err, doris.ErrNotFound):
		name := "doris.database/doris.table"
		var le *doris.LoadError
		var te *doris.TxnError
		switch {
		case errors.As(err, &le):
			name = le.DB + "." + le.Table
		case errors.As(err, &te):
			name = "database " + te.DB
		}
		return unfixable{kind: "doris-not-found",
			what: "Doris does not know " + name + " (unknown database or table, or the table was dropped)",
			fix:  "create the database and table (or recreate the dropped table), or fix doris.database and doris.table"}, true
	case errors.Is(err, errTopicMissing), errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return unfixable{kind: "kafka-topic",
			what: "Kafka topic " + topic + " does not exist",
			fix:  "create the topic, or fix kafka.topic (kafka.topics)"}, true
	case errors.Is(err, checkpoint.ErrResyncFailed):
		// Only a failed re-sync: the failed Save itself (ErrUnsynced alone)
		// is retried, since the next Recover's Load re-syncs the store.
		return unfixable{kind: "store",
			what: "the checkpoint store in job.data_dir cannot be written durably",
			fix:  "check the disk of job.data_dir (space, permissions, read-only mount, I/O errors), then start again"}, true
	}
	var hm *loader.HealMismatchError
	if errors.As(err, &hm) {
		return unfixable{kind: "heal-mismatch",
			what: fmt.Sprintf("the replay of checkpoint %d does not match its decision (table %s)", hm.CheckpointID, hm.Table),
			fix:  "restore the routing (and the source data) of the time the checkpoint was decided"}, true
	}
	return unfixable{}, false
}

// FatalError ends Run when a cause that retrying cannot fix (unknown
// Doris database or table, rejected credentials, a missing topic, a
// checkpoint store that cannot be written) persisted for the fail-fast
// grace (WithFailFastAfter). Nothing is lost: the open checkpoint was not
// decided, and a restart resumes from the last decided position.
type FatalError struct {
	// What names what fails, Fix what to change.
	What, Fix string
	// For is how long it kept failing; Grace the fail-fast grace.
	For, Grace time.Duration
	// Err is the latest failure.
	Err error
}

// Error is one line: what fails, how to fix it, for how long, and the
// answer of Doris or Kafka.
func (e *FatalError) Error() string {
	return fmt.Sprintf("%s: %s; retrying cannot fix this (failing for %v, fail-fast grace %v); nothing is lost, "+
		"a restart resumes from the last decided checkpoint: %s", e.What, e.Fix, e.For.Round(time.Millisecond), e.Grace,
		rootCause(e.Err))
}

// Unwrap returns Err.
func (e *FatalError) Unwrap() error { return e.Err }

// RejectedError ends Run when Doris refused a checkpoint for its data
// ("[DATA_QUALITY_ERROR]too many filtered rows", doris.ErrDataQuality):
// replaying the same rows fails the same way, so the Connector does not
// retry (every retry would burn a label and an aborted transaction,
// counting towards Doris's label_num_threshold). Nothing of the checkpoint
// is loaded; a restart replays it.
type RejectedError struct {
	// Label is the checkpoint's label; Start and End its source range.
	Label      string
	Start, End Position
	// Filtered and Total are Doris's row counters; ErrorURL its error log
	// (the first rejected rows), FirstError its first error message.
	Filtered, Total      int64
	ErrorURL, FirstError string
	// DeadLetterTopic is the configured dead-letter topic ("" for none).
	DeadLetterTopic string
	// BisectFailures is the refused loads bisection spent before giving up
	// (Config.BisectMaxFailures); 0 when it did not run.
	BisectFailures int
	// Err is the loader's error (wrapping the *doris.LoadError).
	Err error
}

// Error names the range, label, Doris's reason and the ways out.
func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Doris rejected the rows of checkpoint label %s (%s) for their data: %s", e.Label,
		rangeString(e.Start, e.End), doris.ErrDataQuality)
	fmt.Fprintf(&b, " (%d of %d rows filtered", e.Filtered, e.Total)
	if e.FirstError != "" {
		fmt.Fprintf(&b, "; first error: %s", oneLine(e.FirstError))
	}
	if e.ErrorURL != "" {
		fmt.Fprintf(&b, "; error log %s", e.ErrorURL)
	}
	b.WriteString("); the same rows fail the same way, so nothing more is loaded and no retry is made. Ways out: fix the " +
		"table (column types, NOT NULL, missing columns) or doris.properties (columns, jsonpaths, strict_mode), or raise " +
		"doris.properties.max_filter_ratio deliberately to load the rest without the filtered rows; then start again")
	if e.BisectFailures > 0 {
		fmt.Fprintf(&b, ". Bisecting the range to dead-letter the refused rows spent its budget of %d refused loads "+
			"(records.dead_letter_max_bisect_loads)", e.BisectFailures)
	} else if e.DeadLetterTopic != "" {
		fmt.Fprintf(&b, ". records.dead_letter_topic %s receives records that cannot be converted and rows the "+
			"pre-check against the table's schema finds Doris would refuse; these rows passed the pre-check (or it is "+
			"off: see the start-up log), so they are not dead-lettered", e.DeadLetterTopic)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RejectedError) Unwrap() error { return e.Err }

// rejected returns the *RejectedError for a checkpoint Doris refused for
// its data, nil for other failures.
func (c *Connector) rejected(err error) *RejectedError {
	if !errors.Is(err, doris.ErrDataQuality) {
		return nil
	}
	re := &RejectedError{Start: c.start.clone(), End: c.next.position(),
		DeadLetterTopic: c.cfg.DeadLetterTopic, Err: err}
	var ce *loader.CheckpointError
	if errors.As(err, &ce) {
		re.Label = ce.Label
	}
	var le *doris.LoadError
	if errors.As(err, &le) {
		if re.Label == "" {
			re.Label = le.Label
		}
		if r := le.Result; r != nil {
			re.Filtered, re.Total, re.ErrorURL, re.FirstError = r.NumberFilteredRows, r.NumberTotalRows, r.ErrorURL, r.FirstErrorMsg
		}
	}
	return re
}

// noteFailure records a failure of the current run: it counts it for the
// backoff, reports the stall (from the first failure on) and returns a
// *FatalError when err is unfixable and has persisted for the fail-fast
// grace (during a drain: at once); nil to retry.
func (c *Connector) noteFailure(err error) error {
	now := c.o.clock.Now()
	f := &c.fail
	f.n++
	f.last = err
	u, ok := unfixableOf(err, c.topicNames())
	if !ok {
		f.kind, f.since = "", time.Time{}
		c.metrics.SetStall(now, describe(err), false)
		return nil
	}
	if f.kind != u.kind {
		f.kind, f.since = u.kind, now
	}
	failing := now.Sub(f.since)
	grace := c.o.failFast
	if c.inDrain && grace > 0 {
		grace = 0 // stopping anyway: waiting for a fix only delays the exit
	}
	if grace >= 0 && failing >= grace {
		fe := &FatalError{What: u.what, Fix: u.fix, For: failing, Grace: grace, Err: err}
		c.metrics.SetStall(now, fe.What+": "+fe.Fix, true)
		c.o.logger.Error("giving up: retrying cannot fix this", "what", u.what, "fix", u.fix, "failing_for", failing,
			"err", err)
		return fe
	}
	c.metrics.SetStall(now, u.what+" ("+u.fix+"): "+describe(err), true)
	c.o.logger.Warn("failure that retrying cannot fix; giving up after the fail-fast grace unless it is fixed",
		"what", u.what, "fix", u.fix, "failing_for", failing, "grace", c.o.failFast, "err", err)
	return nil
}

// progress ends the current run of failures (a checkpoint was decided, or
// reading started).
func (c *Connector) progress() {
	if c.fail.n > 0 {
		c.o.logger.Info("making progress again", "after_failures", c.fail.n)
	}
	c.fail = failureRun{}
	c.metrics.ClearStall()
}

// backoffDelay is the wait before the next retry of the current run of
// failures: min·2^(n-1) capped at max, and, while an unfixable cause
// persists, no later than the end of its fail-fast grace (so that Run
// gives up on time).
func (c *Connector) backoffDelay() time.Duration {
	d := c.o.backoffMin
	for i := 1; i < c.fail.n && d < c.o.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.o.backoffMax)
	if c.inDrain && c.fail.kind != "" {
		// A drain gives up on an unfixable cause at its next failure
		// (noteFailure): one retry at once, no wait that only delays the exit.
		return 0
	}
	if c.fail.kind != "" && c.o.failFast >= 0 {
		left := c.fail.since.Add(c.o.failFast).Sub(c.o.clock.Now())
		d = max(min(d, left), 0)
	}
	return d
}

// describe is a one-line reason for a failure: the checkpoint's label and
// stage when known, and the root cause.
func describe(err error) string {
	var ce *loader.CheckpointError
	if errors.As(err, &ce) {
		return fmt.Sprintf("checkpoint %d label %s failed at %s: %s", ce.ID, ce.Label, ce.Stage, rootCause(ce.Err))
	}
	return rootCause(err)
}

// rootCauseMax bounds the text of rootCause.
const rootCauseMax = 400

// rootCause is the answer of Doris when err carries one (the
// *doris.LoadError or *doris.TxnError), else err's text, on one line and
// at most about rootCauseMax bytes. A longer text is cut in its middle:
// its head (what failed) and its innermost error (the I/O error, Doris's
// message: the end of the chain) are kept.
func rootCause(err error) string {
	var le *doris.LoadError
	var te *doris.TxnError
	s := ""
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		s = le.Error()
	case errors.As(err, &te):
		s = te.Error()
	default:
		s = err.Error()
	}
	s = oneLine(s)
	if len(s) <= rootCauseMax {
		return s
	}
	inner := tailCause(err, s, rootCauseMax/2)
	if inner == "" {
		inner = s[len(s)-rootCauseMax/2:]
	}
	head := s[:rootCauseMax-len(inner)]
	return strings.ToValidUTF8(head, "") + " … " + strings.ToValidUTF8(inner, "")
}

// tailCause follows err's Unwrap chain (the last error of a join or a
// multi-%w) towards the innermost error and returns the text of the first
// error on it that ends s (text, one line) and has at most max bytes: the
// innermost cause with as much of its context as fits. "" if none.
func tailCause(err error, text string, max int) string {
	for err != nil {
		if t := oneLine(err.Error()); len(t) <= max && strings.HasSuffix(text, t) {
			return t
		}
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if es := u.Unwrap(); len(es) > 0 {
				next = es[len(es)-1]
			}
		}
		err = next
	}
	return ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// rangeString renders the offsets of [start, end) per partition:
// "topic orders partitions 0:[5,12) 1:[3,9)", one such part per topic
// (joined by "; ").
func rangeString(start, end Position) string {
	var b strings.Builder
	for i, t := range end.TopicNames() {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "topic %s partitions", t)
		offs, from := end.Of(t), start.Of(t)
		for _, p := range slices.Sorted(maps.Keys(offs)) {
			fmt.Fprintf(&b, " %d:[%d,%d)", p, from[p], offs[p])
		}
	}
	return b.String()
}
