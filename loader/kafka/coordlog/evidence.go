package coordlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The evidence topic (docs/design.md §7.3): one per job, append-only, one
// partition. Every writer of the job (each slot's Store, `checkpoint
// resolve`, `checkpoint reslot`) produces its evidence entries
// (ledger.Entry, the local ledger's line format) there in the same Kafka
// transaction as the state record they describe, so a read_committed
// reader sees an entry exactly when the decision it describes is visible.

// EvidenceTopicPrefix starts the name of every job's evidence topic.
const EvidenceTopicPrefix = "doris-sink.evidence."

// EvidenceTopic returns the evidence topic of job:
// "doris-sink.evidence.<job>".
func EvidenceTopic(job string) string { return EvidenceTopicPrefix + job }

// Evidence record identifiers (the record value's format and version,
// also in its HeaderFormat header).
const (
	EvidenceFormatName    = "doris-sink-evidence"
	EvidenceFormatVersion = 1
)

// DefaultEvidenceMaxMessageBytes is the max.message.bytes an evidence
// topic is created with (1 MiB, Kafka's default) and the bound of one
// evidence record batch: a save whose entries are larger is split into
// several records, all in its transaction.
const DefaultEvidenceMaxMessageBytes = 1 << 20

// Writers of evidence records (EvidenceRecord.Writer).
const (
	// EvidenceWriterSlot is a writer scope's Store (a slot, or the
	// standalone writer): its decisions, commits, heals, resolutions and
	// the events the loader staged.
	EvidenceWriterSlot = "slot"
	// EvidenceWriterOperator is `checkpoint resolve` (WriteOperator).
	EvidenceWriterOperator = "operator"
	// EvidenceWriterReslot is `checkpoint reslot` (WriteReslot).
	EvidenceWriterReslot = "reslot"
)

// EvidenceRecord is one record of the evidence topic: the evidence
// entries one transaction wrote. Field names are stable (snake_case JSON).
type EvidenceRecord struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Job is the job name.
	Job string `json:"job"`
	// Writer is one of the EvidenceWriter constants.
	Writer string `json:"writer"`
	// Scope is the writer scope the entries are of (for an operator record
	// the scope resolved; "" for a reslot, whose entries name no scope).
	Scope string `json:"scope"`
	// Slots is the job's slot count the writer ran with (0: 1).
	Slots int `json:"slots,omitempty"`
	// TopicIDs are the source topics' IDs (hex) the writer's positions were
	// recorded for, topic → ID: a source topic recreated since has another
	// ID (verify reports it).
	TopicIDs map[string]string `json:"topic_ids,omitempty"`
	// Previous is, for a Store's record, the checkpoint its scope had
	// decided before this save (0: none): the first record of a scope
	// with Previous > 0 was written by a job that decided before it wrote
	// evidence (a doris-sink without the evidence topic), so checkpoints
	// up to Previous may be in a local ledger only.
	Previous uint64 `json:"previous,omitempty"`
	// Totals are, for a Store's record, the scope's cumulative totals
	// before Entries (EvidenceTotals): the baseline verify takes when
	// retention removed the records before it. nil in records of a
	// doris-sink without them and of operators and reslots.
	Totals *EvidenceTotals `json:"totals,omitempty"`
	// Entries are the evidence, in the order they happened.
	Entries []ledger.Entry `json:"entries"`

	// Offset and Incarnation are set when read: the record's offset in
	// the evidence topic and the writer incarnation's token.
	Offset      int64  `json:"offset"`
	Incarnation string `json:"incarnation,omitempty"`
}

// producerBatchMaxBytes is franz-go's default ProducerBatchMaxBytes, the
// client's own cap on a record batch (and so on one record), which the
// coordinator log's client keeps: an evidence record stays within it even
// when the evidence topic's max.message.bytes is larger (its default, 1
// MiB, is).
const producerBatchMaxBytes = 1000012

// evidenceKey returns the record key of a writer's evidence records: the
// state record key of its scope (RecordKey), OperatorKey for an operator,
// "<job>/reslot" for a reslot.
func evidenceKey(job, writer, scope string) string {
	switch writer {
	case EvidenceWriterOperator:
		return OperatorKey(job, scope)
	case EvidenceWriterReslot:
		return job + "/reslot"
	}
	return RecordKey(job, scope)
}

// evidenceFormatHeader is the HeaderFormat value of an evidence record.
func evidenceFormatHeader() string {
	return EvidenceFormatName + "/" + strconv.Itoa(EvidenceFormatVersion)
}

// evidenceRecords encodes entries as the evidence records of one
// transaction of writer (scope, incarnation token), each within maxBytes
// (a record of one entry may exceed it: it is produced alone and Kafka
// refuses it, naming the topic). base is the record without entries.
// totals, when given, are the scope's totals before entries: each record
// carries those before its own entries.
func evidenceRecords(base EvidenceRecord, token string, entries []ledger.Entry, maxBytes int64, totals ...EvidenceTotals) ([]*kgo.Record, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if maxBytes <= 0 {
		maxBytes = DefaultEvidenceMaxMessageBytes
	}
	// The client refuses (MESSAGE_TOO_LARGE, not retriable, the same at
	// every attempt) a record above its own batch cap, whatever the
	// topic allows.
	maxBytes = min(maxBytes, producerBatchMaxBytes)
	base.Format, base.Version = EvidenceFormatName, EvidenceFormatVersion
	topic := EvidenceTopic(base.Job)
	key := []byte(evidenceKey(base.Job, base.Writer, base.Scope))
	var out []*kgo.Record
	var run *EvidenceTotals
	if len(totals) > 0 {
		t := totals[0].Clone()
		run = &t
	}
	mk := func(es []ledger.Entry) ([]byte, error) {
		r := base
		r.Entries = es
		r.Totals = run
		return json.Marshal(r)
	}
	for len(entries) > 0 {
		n := len(entries)
		v, err := mk(entries[:n])
		for err == nil && int64(len(v))+int64(len(key))+512+batchOverhead > maxBytes && n > 1 {
			n /= 2
			v, err = mk(entries[:n])
		}
		if err != nil {
			return nil, fmt.Errorf("evidence record of %s: %w", key, err)
		}
		out = append(out, &kgo.Record{Topic: topic, Partition: 0, Key: key, Value: v, Headers: []kgo.RecordHeader{
			{Key: HeaderFormat, Value: []byte(evidenceFormatHeader())},
			{Key: HeaderIncarnation, Value: []byte(token)},
		}})
		if run != nil {
			t := run.Clone()
			t.Add(entries[:n])
			run = &t
		}
		entries = entries[n:]
	}
	return out, nil
}

// EvidenceTopicConfig is how an evidence topic is created: never deleted
// by time or size (cleanup.policy=delete with retention.ms and
// retention.bytes -1: compaction would keep only each writer's last
// record) and an explicit max.message.bytes.
func EvidenceTopicConfig(maxMessageBytes int64) map[string]*string {
	del, inf := "delete", "-1"
	mmb := strconv.FormatInt(maxMessageBytes, 10)
	return map[string]*string{"cleanup.policy": &del, "retention.ms": &inf, "retention.bytes": &inf, "max.message.bytes": &mmb}
}

// ensureEvidenceTopic makes sure the job's evidence topic exists: created
// with EvidenceTopicConfig when missing; an existing one with
// cleanup.policy compact is refused (compaction would drop all but each
// writer's last record). It returns the topic's max.message.bytes (the
// bound of one evidence record).
func ensureEvidenceTopic(ctx context.Context, adm *kadm.Client, topic string, rf int16, log *slog.Logger) (int64, error) {
	if rf == 0 {
		rf = -1
	}
	resp, err := adm.CreateTopic(ctx, 1, rf, EvidenceTopicConfig(DefaultEvidenceMaxMessageBytes), topic)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		log.Info("evidence topic created", "topic", topic, "partitions", 1, "cleanup.policy", "delete", "retention.ms", -1,
			"max.message.bytes", DefaultEvidenceMaxMessageBytes)
		return DefaultEvidenceMaxMessageBytes, nil
	case errors.Is(err, kerr.TopicAlreadyExists):
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return 0, &TopicError{Role: "evidence topic", Topic: topic, Err: err, Reason: fmt.Sprintf(
			"it does not exist and this principal may not create it: grant CREATE on topic %s (and DESCRIBE, "+
				"DESCRIBE_CONFIGS, WRITE; READ for verify), or create it: kafka-topics.sh --create --topic %s --partitions 1 "+
				"--config cleanup.policy=delete --config retention.ms=-1 --config retention.bytes=-1 --config max.message.bytes=%d",
			topic, topic, DefaultEvidenceMaxMessageBytes)}
	default:
		return 0, &TopicError{Role: "evidence topic", Topic: topic, Err: err, Reason: "cannot create it"}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return 0, &TopicError{Role: "evidence topic", Topic: topic, Err: err, Reason: "cannot read its configuration (grant DESCRIBE_CONFIGS on it)"}
	}
	rc, err := rcs.On(topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return 0, &TopicError{Role: "evidence topic", Topic: topic, Err: err, Reason: "cannot read its configuration (grant DESCRIBE_CONFIGS on it)"}
	}
	maxBytes := int64(DefaultEvidenceMaxMessageBytes)
	for _, c := range rc.Configs {
		v := c.MaybeValue()
		switch c.Key {
		case "cleanup.policy":
			if slices.Contains(strings.Split(strings.ReplaceAll(v, " ", ""), ","), "compact") {
				return 0, &TopicError{Role: "evidence topic", Topic: topic, Reason: fmt.Sprintf(
					"its cleanup.policy is %q: compaction would keep only each writer's last record; want delete: "+
						"kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config cleanup.policy=delete", v, topic)}
			}
		case "max.message.bytes":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				maxBytes = n
			}
		}
	}
	return maxBytes, nil
}

// discardLogger returns l, or a logger that drops everything when nil.
func discardLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
