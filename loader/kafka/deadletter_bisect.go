package kafka

import (
	"fmt"
	"maps"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ReasonRejected: Doris refused the row at precommit
// ("[DATA_QUALITY_ERROR]too many filtered rows") although it passed the
// pre-check; bisection found it (see bisectRejected).
const ReasonRejected DeadLetterReason = "rejected"

// DefaultBisectMaxFailures is the default of Config.BisectMaxFailures.
const DefaultBisectMaxFailures = 24

// recKey names one source record.
type recKey struct {
	p   int32
	off int64
}

// bisectState is a bisection in progress: the range Doris refused is
// re-read in checkpoints of at most limit rows, halved after each refusal
// and doubled (up to orig) after each decided one, until a checkpoint of
// one row is refused: that row's record is dead-lettered (c.refused) and
// the rest loads. It ends when a checkpoint reaching end is decided.
type bisectState struct {
	end         map[int32]int64 // the refused range's end (grown by later refusals)
	orig, limit int64
	failures    int   // refused loads in this bisection (each a label and an aborted txn)
	found       int64 // records found and dead-lettered
}

// bisectRejected handles a checkpoint Doris refused for its data (re) when a
// dead-letter topic is set: it starts or continues the bisection and
// reports true to retry at once, false when the budget
// (Config.BisectMaxFailures) is spent or bisection is off.
func (c *Connector) bisectRejected(re *RejectedError) bool {
	if c.cfg.DeadLetterTopic == "" || c.cfg.BisectMaxFailures < 0 {
		return false
	}
	if id, _, healing := c.sink.Healing(); healing {
		// A heal replays a decided checkpoint: the rows bisection found
		// for it are recorded with its decision (RefusedRowSource) and
		// dead-lettered on the replay, so a refusal here is a row no
		// decision recorded (the table or strict_mode changed meanwhile,
		// or more than the recorded bound). Stop instead of bisecting.
		c.o.logger.Error("Doris refused the rows of a checkpoint being healed: not bisecting (rows no decision "+
			"recorded as refused); to let Doris filter the refused rows, start once with "+
			"doris.properties.max_filter_ratio raised", "checkpoint", id, "label", re.Label)
		return false
	}
	b := c.bisect
	if b == nil {
		b = &bisectState{end: maps.Clone(re.End.Offsets), orig: max(c.pend.rows, 1)}
		c.bisect = b
	}
	for p, o := range re.End.Offsets {
		b.end[p] = max(b.end[p], o)
	}
	b.failures++
	if b.failures > c.cfg.BisectMaxFailures {
		re.BisectFailures = b.failures - 1
		return false
	}
	if c.pend.rows == 1 {
		if c.refused == nil {
			c.refused = map[recKey]string{}
		}
		why := re.FirstError
		if why == "" {
			why = fmt.Sprintf("%d of %d rows filtered", re.Filtered, re.Total)
		}
		if re.ErrorURL != "" {
			why += "; error log " + re.ErrorURL
		}
		c.refused[c.pend.lastRow] = oneLine(why)
		b.found++
		c.o.logger.Info("bisection: found a row Doris refuses; it is dead-lettered on the re-read", "topic", c.cfg.Topic,
			"partition", c.pend.lastRow.p, "offset", c.pend.lastRow.off, "doris", oneLine(why), "failed_loads", b.failures)
	}
	b.limit = max(c.pend.rows/2, 1)
	c.o.logger.Warn("Doris refused a checkpoint for its data: bisecting to find the rows (each refused load burns a label)",
		"label", re.Label, "range", rangeString(re.Start, re.End), "rows", c.pend.rows, "next_rows", b.limit,
		"failed_loads", b.failures, "budget", c.cfg.BisectMaxFailures)
	return true
}

// bisectDecided updates a bisection after a decided checkpoint ending at
// end: grow the checkpoint size again, or end the bisection when end
// covers the refused range.
func (c *Connector) bisectDecided(end map[int32]int64) {
	b := c.bisect
	if b == nil {
		return
	}
	for p, o := range b.end {
		if end[p] < o {
			b.limit = min(b.limit*2, b.orig)
			return
		}
	}
	c.o.logger.Info("bisection done: the refused range is loaded without the rows Doris refuses", "dead_lettered", b.found,
		"failed_loads", b.failures)
	c.bisect = nil
}

// refusedRow reports whether bisection found that Doris refuses r's row,
// and Doris's reason.
func (c *Connector) refusedRow(r *kgo.Record) (why string, ok bool) {
	why, ok = c.refused[recKey{r.Partition, r.Offset}]
	return why, ok
}

// dorisColumn is the column Doris's error message names, "" if none:
// "column_name[c], …" (apache/doris be/src/vec/sink/vtablet_block_convertor.cpp,
// _validate_data's error prefix) or "column(c) …" (the scanners' strict-mode
// message).
func dorisColumn(msg string) string {
	for _, p := range []struct{ open, close string }{{"column_name[", "]"}, {"column(", ")"}} {
		if _, rest, ok := strings.Cut(msg, p.open); ok {
			if c, _, ok := strings.Cut(rest, p.close); ok && c != "" && len(c) <= 256 {
				return c
			}
		}
	}
	return ""
}
