package verify

import (
	"context"
	"fmt"
	"strings"
)

// RangeCount is what a read_committed consumer finds in one partition's
// offsets [start, end).
type RangeCount struct {
	// Records counts the data records present: committed or
	// non-transactional; records of aborted transactions are not delivered
	// to a read_committed consumer, so they are not counted.
	Records int64
	// Tombstones counts the Records with a nil value.
	Tombstones int64
	// Control counts transaction markers (commit/abort control records of
	// transactional producers), which take an offset but hold no data.
	Control int64
}

// Accounting says how a checkpoint's offsets were accounted for, when they
// are not one row each (`-o json` field "accounted").
type Accounting struct {
	// DeadLettered is the ledger's count of records sent to the dead-letter
	// topic instead of being loaded.
	DeadLettered int64 `json:"dead_lettered"`
	// Tombstones are nil-value records a Debezium envelope skips (read
	// from Kafka; skipsTombstones).
	Tombstones int64 `json:"tombstones"`
	// Control are transaction markers in the range (read from Kafka).
	Control int64 `json:"control_markers"`
	// Absent are offsets Kafka no longer holds or never delivers: compacted
	// away, or records of aborted transactions.
	Absent int64 `json:"absent"`
	// FromKafka is true when the range was read from Kafka; false when the
	// ledger's dead-letter count alone explains the offsets.
	FromKafka bool `json:"from_kafka"`
}

// String is "2 dead-lettered, 1 tombstone(s), 2 control marker(s), 1 absent",
// or "every record a row" when nothing else is accounted for.
func (a *Accounting) String() string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(a.DeadLettered, "dead-lettered")
	add(a.Tombstones, "tombstone(s)")
	add(a.Control, "control marker(s)")
	add(a.Absent, "absent (compacted or aborted)")
	if len(parts) == 0 {
		return "every record a row: no dead letter, skipped tombstone, control marker or absent offset"
	}
	return strings.Join(parts, ", ")
}

// checkRows accounts for a checkpoint's offsets (docs/design.md §5: every record
// is one row unless it is dead-lettered, or, with the debezium format, a
// tombstone; docs/design.md §6). Offsets that are not rows are explained by the
// ledger's dead-letter count, or else by reading the range from Kafka with
// a read_committed consumer: tombstones, transaction markers and offsets
// that hold no delivered record (compacted away, aborted transactions).
// Rows missing for records Kafka holds, or rows beyond them, are gaps.
// Without Kafka a shortfall is unverifiable and an excess still a gap.
func checkRows(ctx context.Context, in Input, r *record, pr parsedRange, offsets int64) (*Accounting, []Finding) {
	if !r.counts || !notNull(r.end) {
		return nil, nil
	}
	var fs []Finding
	c := r.rows
	if c.loaded+c.filtered+c.unselected != c.total {
		fs = append(fs, Finding{Severity: SeverityError, Kind: KindRows,
			Message: fmt.Sprintf("Doris counted %d rows but loaded %d + filtered %d + unselected %d", c.total, c.loaded, c.filtered, c.unselected)})
	}
	if offsets == 0 {
		return nil, fs
	}
	rowsAndDLQ := c.total + r.deadLettered
	if rowsAndDLQ == offsets {
		if r.deadLettered == 0 {
			return nil, fs
		}
		return &Accounting{DeadLettered: r.deadLettered}, fs
	}
	gap := func(format string, a ...any) {
		fs = append(fs, Finding{Severity: SeverityGap, Kind: KindRows, Message: fmt.Sprintf(format, a...)})
	}
	if in.Kafka == nil || !pr.ok {
		if rowsAndDLQ > offsets {
			gap("the load has %d rows and %d dead letters for %d offsets: records loaded twice", c.total, r.deadLettered, offsets)
		} else {
			fs = append(fs, Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: fmt.Sprintf(
				"the load has %d rows and %d dead letters for %d offsets; without Kafka the other %d cannot be told "+
					"from a gap (tombstones, transaction markers, compacted offsets)", c.total, r.deadLettered, offsets, offsets-rowsAndDLQ)})
		}
		return nil, fs
	}
	a := &Accounting{DeadLettered: r.deadLettered, FromKafka: true}
	var records int64
	for _, t := range pr.topics() {
		tr := pr.ranges[t]
		for _, part := range sortedParts(tr.end) {
			start, end := tr.start[part], tr.end[part]
			if end <= start {
				continue
			}
			rc, err := in.Kafka.CountRange(ctx, t, part, start, end)
			if err != nil {
				fs = append(fs, Finding{Severity: SeverityWarning, Kind: KindUnverifiable,
					Message: fmt.Sprintf("the load has %d rows and %d dead letters for %d offsets, and %s [%d, %d) could not be read: %v",
						c.total, r.deadLettered, offsets, pr.where(t, part), start, end, err)})
				return nil, fs
			}
			records += rc.Records
			a.Control += rc.Control
			if in.SkipsTombstones {
				a.Tombstones += rc.Tombstones
			}
			a.Absent += (end - start) - rc.Records - rc.Control
		}
	}
	want := records - a.Tombstones - r.deadLettered
	switch {
	case c.total < want:
		gap("Kafka holds %d records in the range (%s) but the load has %d rows: %d record(s) never loaded",
			records, a.String(), c.total, want-c.total)
		return nil, fs
	case c.total > want:
		gap("Kafka holds %d records in the range (%s) but the load has %d rows: %d row(s) loaded twice",
			records, a.String(), c.total, c.total-want)
		return nil, fs
	}
	return a, fs
}
