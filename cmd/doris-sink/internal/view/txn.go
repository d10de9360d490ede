// Package view turns Doris and store records into the stable JSON shapes
// and human rows the operator commands print.
package view

import (
	"strconv"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
)

// Txn is a SHOW TRANSACTION row with stable JSON names.
type Txn struct {
	ID            int64     `json:"id"`
	Label         string    `json:"label"`
	Status        string    `json:"status"`
	SourceType    string    `json:"source_type,omitempty"`
	Coordinator   string    `json:"coordinator,omitempty"`
	PrepareTime   time.Time `json:"prepare_time,omitzero"`
	PreCommitTime time.Time `json:"precommit_time,omitzero"`
	CommitTime    time.Time `json:"commit_time,omitzero"`
	PublishTime   time.Time `json:"publish_time,omitzero"`
	FinishTime    time.Time `json:"finish_time,omitzero"`
	Reason        string    `json:"reason,omitempty"`
	TimeoutMs     int64     `json:"timeout_ms,omitempty"`
	ErrMsg        string    `json:"err_msg,omitempty"`
}

// FromTransaction converts a doris.Transaction.
func FromTransaction(t *doris.Transaction) *Txn {
	if t == nil {
		return nil
	}
	return &Txn{
		ID: t.ID, Label: t.Label, Status: string(t.Status), SourceType: t.SourceType, Coordinator: t.Coordinator,
		PrepareTime: t.PrepareTime, PreCommitTime: t.PreCommitTime, CommitTime: t.CommitTime,
		PublishTime: t.PublishTime, FinishTime: t.FinishTime, Reason: t.Reason, TimeoutMs: t.TimeoutMs, ErrMsg: t.ErrMsg,
	}
}

// AddTxn adds the transaction's fields to kv.
func AddTxn(kv *cmdutil.KV, t *Txn) {
	kv.Add("Txn id", strconv.FormatInt(t.ID, 10))
	kv.Add("Txn status", t.Status)
	if t.SourceType != "" {
		kv.Add("Source type", t.SourceType)
	}
	for _, p := range []struct {
		k string
		v time.Time
	}{{"Prepared", t.PrepareTime}, {"Precommitted", t.PreCommitTime}, {"Committed", t.CommitTime}, {"Published", t.PublishTime}, {"Finished", t.FinishTime}} {
		if !p.v.IsZero() {
			kv.Add(p.k, Time(p.v))
		}
	}
	if t.TimeoutMs > 0 {
		kv.Add("Timeout", (time.Duration(t.TimeoutMs) * time.Millisecond).String())
	}
	if t.Reason != "" {
		kv.Add("Reason", t.Reason)
	}
	if t.ErrMsg != "" {
		kv.Add("Error", t.ErrMsg)
	}
}

// Time formats a time for humans ("" for zero).
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}
