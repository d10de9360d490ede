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

// Operator records: an operator's decision (`checkpoint resolve`) written to
// the state topic under a key and a transactional id of its own, so that
// writing it never fences the job (a running job keeps its producer epoch)
// and the job's owner applies it at its next start, re-checking it against
// its own state. Compaction keeps the newest operator record of a scope.
const (
	OperatorFormatName    = "doris-sink-operator"
	OperatorFormatVersion = 1
	// OperatorResolve is the kind of a `checkpoint resolve` record.
	OperatorResolve = "resolve"
)

// OperatorKey returns the key of the operator records of job's writer
// scope: "<job>/operator/<scope>" (a scope never contains "/", so it never
// collides with a state record key).
func OperatorKey(job, scope string) string { return job + "/operator/" + scope }

// OperatorTransactionalID returns the transactional id operator commands
// write with: "doris-sink.<job>/operator". It differs from every writer
// scope's TransactionalID (a job name never contains "/"), so an operator
// write never bumps the job's producer epoch.
func OperatorTransactionalID(job string) string { return "doris-sink." + job + "/operator" }

// Operator is one operator decision in the state topic.
type Operator struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Kind is OperatorResolve.
	Kind string `json:"kind"`
	// Scope is the writer scope the decision is for.
	Scope string `json:"scope"`
	// Checkpoint, Label and TxnID name the decided checkpoint the operator
	// resolved, as the state record at StateOffset held it; the owner
	// applies the record only while its decided checkpoint is that one.
	Checkpoint uint64 `json:"checkpoint"`
	Label      string `json:"label"`
	TxnID      int64  `json:"txn_id,omitempty"`
	// Table is the resolved txn's table ("db.table") when the decision
	// holds txns of several tables (checkpoint resolve --table); Label and
	// TxnID are that txn's. Empty: the owner's table.
	Table string `json:"table,omitempty"`
	// Sub is the resolved txn's sub-load within Table (doris.sub_loads;
	// 0 when the table loads through one Stream Load).
	Sub int `json:"sub,omitempty"`
	// Assumed is checkpoint.ResolvedVisible or checkpoint.ResolvedAborted.
	Assumed string `json:"assumed"`
	// By and At say who decided and when.
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Doris is what Doris held for the label when the operator asked.
	Doris string `json:"doris,omitempty"`
	// StateOffset is the offset of the state record the operator read.
	StateOffset int64 `json:"state_offset"`
	// Offset is where the record is in the state topic: set when read
	// (written as 0, omitted).
	Offset int64 `json:"offset,omitempty"`
}

// WriteOperator writes op (Format, Version and Scope filled in) as the
// newest operator record of cfg.Job's scope cfg.Scope, in one transaction
// of OperatorTransactionalID(cfg.Job), and returns its offset. It needs
// the state topic to exist (the job ran with job.coordinator kafka). It
// fences only another operator command writing at the same time, never
// the job.
func WriteOperator(ctx context.Context, cfg Config, op Operator) (int64, error) {
	if cfg.Scope == "" {
		cfg.Scope = DefaultScope
	}
	topic := StateTopic(cfg.Job)
	op.Format, op.Version, op.Scope = OperatorFormatName, OperatorFormatVersion, cfg.Scope
	v, err := json.Marshal(op)
	if err != nil {
		return 0, fmt.Errorf("operator record: %w", err)
	}
	txnID := OperatorTransactionalID(cfg.Job)
	opts := append(append([]kgo.Opt{}, cfg.ClientOpts...), kgo.TransactionalID(txnID),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, fmt.Errorf("operator record in %s: kafka client: %w", topic, err)
	}
	defer cl.Close()
	// A job last run by a doris-sink without an evidence topic has none yet.
	if _, err := ensureEvidenceTopic(ctx, kadm.NewClient(cl), EvidenceTopic(cfg.Job), cfg.ReplicationFactor, discardLogger(cfg.Logger)); err != nil {
		return 0, err
	}
	if err := cl.BeginTransaction(); err != nil {
		return 0, fmt.Errorf("operator record in %s: begin transaction of %s: %w", topic, txnID, err)
	}
	rec := &kgo.Record{Topic: topic, Partition: 0, Key: []byte(OperatorKey(cfg.Job, cfg.Scope)), Value: v,
		Headers: []kgo.RecordHeader{{Key: HeaderFormat, Value: []byte(formatHeader())},
			{Key: HeaderIncarnation, Value: []byte("operator")}}}
	ev, err := evidenceRecords(EvidenceRecord{Job: cfg.Job, Writer: EvidenceWriterOperator, Scope: cfg.Scope}, "operator",
		[]ledger.Entry{operatorEntry(cfg.Job, op)}, DefaultEvidenceMaxMessageBytes)
	if err != nil {
		_ = cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
		return 0, fmt.Errorf("operator record in %s: %w", topic, err)
	}
	res := cl.ProduceSync(ctx, rec)
	if err := res.FirstErr(); err != nil {
		_ = cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
		return 0, fmt.Errorf("operator record in %s: produce: %w", topic, err)
	}
	if err := cl.ProduceSync(ctx, ev...).FirstErr(); err != nil {
		_ = cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
		return 0, fmt.Errorf("operator record in %s: produce its evidence to %s: %w", topic, EvidenceTopic(cfg.Job), err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return 0, fmt.Errorf("operator record in %s: commit transaction of %s (run the command again: a repeat is harmless): %w",
			topic, txnID, err)
	}
	return res[0].Record.Offset, nil
}

// operatorEntry is the evidence entry of operator record op of job.
func operatorEntry(job string, op Operator) ledger.Entry {
	db, table, _ := checkpoint.SplitTable(op.Table)
	return ledger.Entry{Time: op.At, Event: ledger.EventResolveRequested, Checkpoint: op.Checkpoint, Job: job, DB: db, Table: table,
		Sub: op.Sub, Label: op.Label, TxnID: op.TxnID, State: op.Doris,
		Note: "operator asked to assume " + op.Assumed + " (by " + op.By + ")"}
}

// OperatorOf decodes the newest operator record of scope ("" =
// DefaultScope) in the snapshot; ok false when there is none.
func (sn *Snapshot) OperatorOf(scope string) (*Operator, bool, error) {
	if scope == "" {
		scope = DefaultScope
	}
	rec, ok := sn.Records[OperatorKey(sn.Job, scope)]
	if !ok {
		return nil, false, nil
	}
	op, err := decodeOperator(sn.Topic, rec)
	return op, err == nil, err
}

// PendingOperator returns the newest operator record of the store's scope
// (ok false when there is none). The caller decides whether it still
// applies to the state (its checkpoint, label and txn are the decided
// ones) and applies it through the store, which is fenced as usual.
func (s *Store) PendingOperator(ctx context.Context) (*Operator, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.usable(); err != nil {
		return nil, false, err
	}
	rec, ok, err := s.log.readKey(ctx, OperatorKey(s.owner.Job, s.owner.Writer))
	if err != nil || !ok {
		return nil, false, err
	}
	op, err := decodeOperator(s.log.Topic(), rec)
	if err != nil {
		return nil, false, err
	}
	return op, true, nil
}

func decodeOperator(topic string, rec Record) (*Operator, error) {
	var op Operator
	dec := json.NewDecoder(bytes.NewReader(rec.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return nil, fmt.Errorf("state topic %s offset %d: not a doris-sink operator record: %w", topic, rec.Offset, err)
	}
	if op.Format != OperatorFormatName || op.Version != OperatorFormatVersion {
		return nil, fmt.Errorf("state topic %s offset %d: operator record format %s/%d, this doris-sink reads %s/%d",
			topic, rec.Offset, op.Format, op.Version, OperatorFormatName, OperatorFormatVersion)
	}
	if op.Kind != OperatorResolve {
		return nil, errors.New("state topic " + topic + ": operator record of unknown kind " + op.Kind)
	}
	op.Offset = rec.Offset
	return &op, nil
}
