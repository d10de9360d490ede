package coordlog

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// SlotsMismatchError refuses to open a writer slot's store when a state
// record of the job (this slot's or another's) records another slot count
// than the configured job.slots: partition p of topic t belongs to slot
// SlotOf(t, p, slots), so a different count moves partitions between slot
// records, and the moved partitions' recorded positions would be ignored
// (re-read from kafka.start, or skipped). Nothing was loaded. The way out
// is to stop every member and re-slot the job deliberately
// (`doris-sink checkpoint reslot --slots N`), which rewrites the records
// for the new count.
type SlotsMismatchError struct {
	// Job and StateTopic name the job's state topic.
	Job, StateTopic string
	// Scope is the writer scope whose record holds Recorded (its key is
	// RecordKey(Job, Scope)).
	Scope string
	// Recorded is the slot count the record holds (1 when it records
	// none: a standalone job); Configured is job.slots.
	Recorded, Configured int
}

// Error names both counts and the way out.
func (e *SlotsMismatchError) Error() string {
	return fmt.Sprintf("job %s: job.slots is %d but state topic %s records %d writer slots (record %s): partitions map to "+
		"slots by their count, so starting with another count would ignore the recorded positions of every partition "+
		"that moves. Nothing was loaded. Set job.slots back to %d, or stop every member of the job and run "+
		"`doris-sink checkpoint reslot -c <job config> --slots %d`, then start the members again",
		e.Job, e.Configured, e.StateTopic, e.Recorded, RecordKey(e.Job, e.Scope), e.Recorded, e.Configured)
}

// recordedSlots is the slot count a document records: absent means 1.
func recordedSlots(doc document) int {
	if doc.Source.Slots < 1 {
		return 1
	}
	return doc.Source.Slots
}

// docSlots is the value a document records for a slot count: 1 is
// omitted, so a standalone job's record is unchanged.
func docSlots(slots int) int {
	if slots <= 1 {
		return 0
	}
	return slots
}

// checkSlots scans the state topic up to the log's open end and refuses
// (*SlotsMismatchError) when any writer scope's state record records
// another slot count than slots. Operator records and other keys are not
// state records and are skipped; a record that does not decode is left to
// its own store's Load.
func (s *Store) checkSlots(ctx context.Context, slots int) error {
	l := s.log
	prefix := []byte(l.cfg.Job + "/")
	latest := map[string]Record{}
	err := scan(ctx, l.cfg.ClientOpts, l.topic, l.openEnd, func(r *kgo.Record) error {
		rest, ok := bytes.CutPrefix(r.Key, prefix)
		if !ok || bytes.Contains(rest, []byte("/")) {
			return nil
		}
		if r.Value == nil {
			delete(latest, string(rest))
			return nil
		}
		rec, err := toRecord(l.topic, r)
		if err != nil {
			return err
		}
		latest[string(rest)] = rec
		return nil
	})
	if err != nil {
		return fmt.Errorf("state topic %s: read the slot counts recorded: %w", l.topic, err)
	}
	for _, scope := range slices.Sorted(maps.Keys(latest)) {
		_, doc, err := decodeDocument(l.topic, latest[scope])
		if err != nil {
			continue
		}
		if n := recordedSlots(doc); n != slots {
			return &SlotsMismatchError{Job: l.cfg.Job, StateTopic: l.topic, Scope: scope, Recorded: n, Configured: slots}
		}
	}
	return nil
}
