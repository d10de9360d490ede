package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// OutOfRange is one partition whose stored offset lies outside its log.
type OutOfRange struct {
	Partition int32
	// Stored is the offset the job would read next after a restart: the
	// last decided end (or the persisted first start); with Start true,
	// the start of an uncommitted decided checkpoint it would heal.
	Stored int64
	Start  bool
	// Read is, when the job found the partition out of range while it
	// ran, the offset it asked Kafka for (at or after Stored: the records
	// in between were read into the open checkpoint, which was not
	// decided); -1 at start.
	Read int64
	// LogStart and LogEnd are the partition's first offset and high
	// watermark; Missing is true when the partition no longer exists.
	LogStart, LogEnd int64
	Missing          bool
}

// Lost is how many records between Stored and the log start the job can
// no longer load (0 when Stored is not behind the log start).
func (p OutOfRange) Lost() int64 { return max(p.LogStart-p.Stored, 0) }

// PositionOutOfRangeError stops a job whose source position lies outside
// the topic's log: an offset beyond the log end (the topic was truncated
// or recreated, or the positions belong to another cluster) or behind the
// log start (retention or DeleteRecords removed records the job never
// loaded). At start the command checks the stored positions
// (cmd/doris-sink run); while the job runs the Connector returns it when a
// fetch answers OFFSET_OUT_OF_RANGE (its consumer never resets: see
// consumerOpts). Kafka would silently reset the consumer (skipping or
// re-reading records); the job refuses and names the way out, a
// deliberate `doris-sink checkpoint rebase`.
type PositionOutOfRangeError struct {
	// Job names the job ("" when the Connector does not know it).
	Job, Topic string
	// Checkpoint is the decided checkpoint whose positions these are (0:
	// the persisted first start).
	Checkpoint uint64
	Partitions []OutOfRange
	// Running is set when the job found it while it ran (a fetch), not at
	// start.
	Running bool
	// Err is Kafka's answer (kerr.OffsetOutOfRange) when running.
	Err error
}

// Error names every partition, the stored offset, the log range, what is
// affected (the records lost) and the rebase command.
func (e *PositionOutOfRangeError) Error() string {
	var b strings.Builder
	what := "the persisted first start"
	if e.Checkpoint > 0 {
		what = "checkpoint " + strconv.FormatUint(e.Checkpoint, 10) + "'s positions"
	}
	if e.Job != "" {
		fmt.Fprintf(&b, "job %s: ", e.Job)
	}
	when := ""
	if e.Running {
		when = " while the job ran (Kafka answered OFFSET_OUT_OF_RANGE to a fetch)"
	}
	fmt.Fprintf(&b, "%s lie outside the log of topic %s%s:", what, e.Topic, when)
	for _, p := range e.Partitions {
		kind := "next offset"
		if p.Start {
			kind = "start of the checkpoint to heal"
		}
		read := ""
		if p.Read > p.Stored {
			read = fmt.Sprintf(" (the job had read up to %d; those records were in the open checkpoint, not decided, and are not loaded)", p.Read)
		}
		switch {
		case p.Missing:
			fmt.Fprintf(&b, " %s/%d %s %d: the partition does not exist;", e.Topic, p.Partition, kind, p.Stored)
		case p.Stored > p.LogEnd:
			fmt.Fprintf(&b, " %s/%d %s %d is beyond the log end %d (log start %d): the topic was truncated or recreated, "+
				"or the positions are of another cluster; records %d..%d of the new log would be skipped or re-read;",
				e.Topic, p.Partition, kind, p.Stored, p.LogEnd, p.LogStart, p.LogStart, p.LogEnd-1)
		case p.Stored < p.LogStart:
			fmt.Fprintf(&b, " %s/%d %s %d is behind the log start %d (log end %d): records %d..%d (%d records) were deleted "+
				"(retention, DeleteRecords) before the job loaded them and are lost to it%s;",
				e.Topic, p.Partition, kind, p.Stored, p.LogStart, p.LogEnd, p.Stored, p.LogStart-1, p.Lost(), read)
		default:
			// Only while running: the decided offset is inside the log, the
			// read offset is not (the broker truncated the log under it).
			fmt.Fprintf(&b, " %s/%d read offset %d is outside the log %d..%d (the broker truncated the log under the job, "+
				"e.g. an unclean leader election); the %s %d is inside it and nothing decided is lost; a restart resumes there;",
				e.Topic, p.Partition, p.Read, p.LogStart, p.LogEnd, kind, p.Stored)
		}
	}
	b.WriteString(" nothing was loaded")
	if e.Running {
		b.WriteString(" after the last decided checkpoint")
	}
	b.WriteString(". Decide where the job continues and rebase it deliberately, with the job stopped: " +
		"`doris-sink checkpoint rebase -c <job config> --to earliest|latest --dry-run` (or --offsets <partition>=<offset>,...), " +
		"then the same with --yes")
	return b.String()
}

// Unwrap returns Kafka's answer (nil at start).
func (e *PositionOutOfRangeError) Unwrap() error { return e.Err }

// outOfRange builds the errors of partitions a fetch found out of range
// (topic → partition → Kafka's error): per topic, the position a restart
// resumes from (the start of the open checkpoint: the last decided end, or
// the first start) against the log range listed now. A listing failure
// keeps the Kafka error and says so.
func (c *Connector) outOfRange(ctx context.Context, parts map[string]map[int32]error) error {
	id, _, _ := c.sink.LastDecision()
	var errs []error
	for _, topic := range slices.Sorted(maps.Keys(parts)) {
		e := &PositionOutOfRangeError{Topic: topic, Checkpoint: id, Running: true}
		starts, serr := c.adm.ListStartOffsets(ctx, topic)
		ends, eerr := c.adm.ListEndOffsets(ctx, topic)
		if lerr := errors.Join(serr, eerr); lerr != nil {
			errs = append(errs, fmt.Errorf("topic %s: the position to read is no longer in the log (records were deleted "+
				"by retention or lost by the broker before they were loaded; listing the log range failed: %v); rebase the job "+
				"deliberately with `doris-sink checkpoint rebase -c <job config> --to earliest|latest --dry-run`: %w",
				topic, lerr, errors.Join(slices.Collect(maps.Values(parts[topic]))...)))
			continue
		}
		from := c.start.Of(topic)
		for _, p := range slices.Sorted(maps.Keys(parts[topic])) {
			if e.Err == nil {
				e.Err = parts[topic][p]
			}
			read, _ := c.next.get(topic, p)
			stored, ok := from[p]
			if !ok {
				stored = read
			}
			r := OutOfRange{Partition: p, Stored: stored, Read: read}
			s, okS := starts.Lookup(topic, p)
			en, okE := ends.Lookup(topic, p)
			if !okS || !okE || s.Err != nil || en.Err != nil {
				r.Missing = true
			} else {
				r.LogStart, r.LogEnd = s.Offset, en.Offset
			}
			e.Partitions = append(e.Partitions, r)
		}
		if e.Err == nil {
			e.Err = kerr.OffsetOutOfRange
		}
		errs = append(errs, e)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
