package coordlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ReslotIncarnation is the incarnation token of the state records
// `checkpoint reslot` writes (HeaderIncarnation): not a writer
// incarnation, so a slot's next writer never takes them for its own.
const ReslotIncarnation = "reslot"

// ReslotTransactionalID returns the transactional id `checkpoint reslot`
// writes with: "doris-sink.<job>/reslot". It differs from every writer
// scope's TransactionalID and from OperatorTransactionalID; a rerun after
// a crash opens it again, which aborts the transaction the crashed run
// left open.
func ReslotTransactionalID(job string) string { return "doris-sink." + job + "/reslot" }

// SlotRecord is one writer scope's new state record of a reslot.
type SlotRecord struct {
	// Scope is the writer scope (SlotScope of the slot).
	Scope string
	// State is the scope's new checkpoint state (Owner.Writer = Scope).
	State *checkpoint.State
	// Source is the source info recorded with it (topic IDs, first
	// start); its Slots is replaced by WriteReslot's slots.
	Source Source
}

// ReslotConflictError is a reslot refused because the state topic moved
// after the plan read it: something (a member started again, an operator
// command) wrote to it. Nothing of the reslot is visible.
type ReslotConflictError struct {
	Job, StateTopic string
	// Expected is the stable end the plan read; Got the offset the
	// reslot's first record landed at.
	Expected, Got int64
}

// Error names the offsets and the way out.
func (e *ReslotConflictError) Error() string {
	return fmt.Sprintf("job %s: state topic %s was written after the reslot read it (expected its first record at offset %d, "+
		"it landed at %d): a member of the job or another operator command is writing; stop every member and run the reslot "+
		"again; nothing was changed", e.Job, e.StateTopic, e.Expected, e.Got)
}

// WriteReslot writes recs as the new state records of their scopes, each
// recording slots as the job's slot count, in ONE transaction of
// ReslotTransactionalID(cfg.Job): a read_committed reader sees all of them
// or none. expectEnd is the state topic's last stable offset the caller
// planned on (after it fenced every writer scope it rewrites): when the
// first record does not land there, something else wrote in between and
// the transaction is aborted (*ReslotConflictError). It returns each
// scope's record offset.
func WriteReslot(ctx context.Context, cfg Config, slots int, expectEnd int64, recs []SlotRecord) (map[string]int64, error) {
	if cfg.Job == "" {
		return nil, errors.New("reslot: job name is empty")
	}
	if len(recs) == 0 {
		return nil, errors.New("reslot: no state record to write")
	}
	topic := StateTopic(cfg.Job)
	var krecs []*kgo.Record
	for _, r := range recs {
		if r.State == nil || r.State.Owner.Writer != r.Scope {
			return nil, fmt.Errorf("reslot: the state of scope %s is missing or names writer scope %q", r.Scope, ownerWriter(r.State))
		}
		v, err := encodeSlotDocument(r, slots)
		if err != nil {
			return nil, fmt.Errorf("reslot: state record of scope %s: %w", r.Scope, err)
		}
		krecs = append(krecs, &kgo.Record{Topic: topic, Partition: 0, Key: []byte(RecordKey(cfg.Job, r.Scope)), Value: v,
			Headers: []kgo.RecordHeader{{Key: HeaderFormat, Value: []byte(formatHeader())},
				{Key: HeaderIncarnation, Value: []byte(ReslotIncarnation)}}})
	}
	var entries []ledger.Entry
	for _, r := range recs {
		e := ledger.Entry{Time: time.Now(), Event: ledger.EventResliced, Job: cfg.Job, DB: r.State.Owner.DB, Table: r.State.Owner.Table,
			Note: fmt.Sprintf("writer scope %s rewritten by checkpoint reslot --slots %d", r.Scope, slots)}
		if d := r.State.Decided; d != nil {
			e.Checkpoint, e.Label, e.DecidedAt, e.CommittedAt = d.ID, d.Label, d.DecidedAt, d.CommittedAt
			e.Ranges = ledger.Ranges(d.Start, d.End)
		}
		entries = append(entries, e)
	}
	ev, err := evidenceRecords(EvidenceRecord{Job: cfg.Job, Writer: EvidenceWriterReslot, Slots: docSlots(slots)}, ReslotIncarnation,
		entries, DefaultEvidenceMaxMessageBytes)
	if err != nil {
		return nil, fmt.Errorf("reslot: %w", err)
	}
	txnID := ReslotTransactionalID(cfg.Job)
	timeout := cfg.TransactionTimeout
	if timeout <= 0 {
		timeout = DefaultTransactionTimeout
	}
	opts := append(append([]kgo.Opt{}, cfg.ClientOpts...), kgo.TransactionalID(txnID), kgo.TransactionTimeout(timeout),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("reslot in %s: kafka client: %w", topic, err)
	}
	defer cl.Close()
	// A job last run by a doris-sink without an evidence topic has none yet.
	if _, err := ensureEvidenceTopic(ctx, kadm.NewClient(cl), EvidenceTopic(cfg.Job), cfg.ReplicationFactor, discardLogger(cfg.Logger)); err != nil {
		return nil, err
	}
	if err := cl.BeginTransaction(); err != nil {
		return nil, fmt.Errorf("reslot in %s: begin transaction of %s: %w", topic, txnID, err)
	}
	abort := func(cause error) (map[string]int64, error) {
		if aerr := cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort); aerr != nil {
			return nil, fmt.Errorf("%w (and aborting transaction %s failed: %v; a rerun aborts it)", cause, txnID, aerr)
		}
		return nil, cause
	}
	res := cl.ProduceSync(ctx, krecs...)
	if err := res.FirstErr(); err != nil {
		return abort(fmt.Errorf("reslot in %s: produce: %w", topic, err))
	}
	// The evidence after the state records (ProduceSync's results come in
	// completion order: one partition keeps the state records' order).
	if err := cl.ProduceSync(ctx, ev...).FirstErr(); err != nil {
		return abort(fmt.Errorf("reslot: produce its evidence to %s: %w", EvidenceTopic(cfg.Job), err))
	}
	out := map[string]int64{}
	first := int64(-1)
	for i, r := range res {
		out[recs[i].Scope] = r.Record.Offset
		if first < 0 || r.Record.Offset < first {
			first = r.Record.Offset
		}
	}
	if first != expectEnd {
		return abort(&ReslotConflictError{Job: cfg.Job, StateTopic: topic, Expected: expectEnd, Got: first})
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return nil, fmt.Errorf("reslot in %s: commit transaction of %s (its outcome is unknown: run the reslot again, "+
			"it reads what is recorded and completes): %w", topic, txnID, err)
	}
	return out, nil
}

func ownerWriter(st *checkpoint.State) string {
	if st == nil {
		return ""
	}
	return st.Owner.Writer
}

// encodeSlotDocument encodes r as a Store's state document recording
// slots. The dead-letter marks are left out: they read as "produced
// through the decided end", which a reslot's committed positions are.
func encodeSlotDocument(r SlotRecord, slots int) ([]byte, error) {
	b, err := checkpoint.Encode(r.State)
	if err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, err
	}
	src := sourceInfo(r.Source)
	src.Slots = docSlots(slots)
	return json.Marshal(document{Format: StoreFormatName, Version: StoreFormatVersion, Checkpoint: compact.Bytes(), Source: src})
}
