package coordlog

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// events returns the events of entries as "event:checkpoint" strings.
func events(entries []ledger.Entry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Event+":"+uitoa(e.Checkpoint))
	}
	return strings.Join(out, " ")
}

// The evidence of a decision rides in the decision's transaction, the
// committed entry in the commit mark's, a staged event in the next save;
// any process reads them back with ReadEvidence, typed, with the source
// topic's ID; a reopened store (the next owner) continues the same log.
func TestEvidenceRidesInTheSaves(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cfg := storeConfig(c, "ev")
	if _, err := ReadEvidence(ctx, "ev", cfg.Log.ClientOpts, EvidenceReadOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadEvidence before any writer: %v, want a *NoEvidenceError", err)
	}
	s := mustOpenStore(t, cfg)
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st, map[int32]int64{0: 7, 1: 3})
	st.Decided.Counts = &checkpoint.LoadCounts{RowsTotal: 10, RowsLoaded: 10, DeadLettered: 2}
	for i := range st.Decided.Txns {
		st.Decided.Txns[i].Counts = &checkpoint.LoadCounts{RowsTotal: 10, RowsLoaded: 10}
	}
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	el, err := ReadEvidence(ctx, "ev", cfg.Log.ClientOpts, EvidenceReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := events(el.EntriesOf("0")); got != "decided:1" {
		t.Fatalf("evidence after the decision: %q, want decided:1", got)
	}
	e := el.EntriesOf("0")[0]
	if e.Label != st.Decided.Label || e.TxnID != 101 || e.RowsLoaded != 10 || e.DeadLettered != 2 || e.Table != "t" ||
		!strings.Contains(string(e.Ranges), `"0":7`) {
		t.Errorf("decided entry %+v: want the decision's label, txn, counts, table and range", e)
	}
	if r := el.Records[0]; r.Writer != EvidenceWriterSlot || r.Scope != "0" || r.TopicIDs["orders"] == "" || r.Incarnation == "" {
		t.Errorf("record %+v: want writer slot, scope 0, the topic's ID and the incarnation token", r)
	}
	s.StageEvidence(ledger.Entry{Time: time.Now(), Event: ledger.EventTableCreated, Job: "ev", DB: "db", Table: "t2", Note: "CREATE"})
	st.Decided.Committed, st.Decided.CommittedAt = true, time.Now()
	st.Decided.Txns = nil // single-table form: Sync marks its one txn
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := mustOpenStore(t, cfg)
	st2, err := s2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st2, map[int32]int64{0: 9, 1: 3})
	if err := s2.Save(ctx, st2); err != nil {
		t.Fatal(err)
	}
	el, err = ReadEvidence(ctx, "ev", cfg.Log.ClientOpts, EvidenceReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events(el.EntriesOf("0")), "decided:1 table_created:0 committed:1 decided:2"; got != want {
		t.Fatalf("evidence: %q, want %q", got, want)
	}
	if el.Records[0].Incarnation == el.Records[len(el.Records)-1].Incarnation {
		t.Errorf("the reopened store wrote with the first incarnation's token")
	}
	from := el.Records[len(el.Records)-1].Offset
	el, err = ReadEvidence(ctx, "ev", cfg.Log.ClientOpts, EvidenceReadOptions{From: from})
	if err != nil || events(el.EntriesOf("0")) != "decided:2" {
		t.Fatalf("ReadEvidence From %d: %v %v, want decided:2 only", from, el, err)
	}
}

// A save that fails writes no evidence: the staged entry stays for the
// next save that succeeds, and a transaction refused as a whole leaves
// nothing in the evidence topic.
func TestEvidenceAbsentWithoutTheDecision(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cfg := storeConfig(c, "ev2")
	s := mustOpenStore(t, cfg)
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st, map[int32]int64{0: 7})
	// A newer incarnation fences s: its decision is refused, and with it
	// the evidence.
	other := mustOpenStore(t, cfg)
	if err := s.Save(ctx, st); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("fenced Save: %v", err)
	}
	el, err := ReadEvidence(ctx, "ev2", cfg.Log.ClientOpts, EvidenceReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(el.Records) != 0 {
		t.Fatalf("evidence of a refused decision: %+v", el.Records)
	}
	_ = other
}

// The evidence topic is created append-only (delete, infinite retention,
// explicit max.message.bytes); a compacted one is refused.
func TestEvidenceTopicConfig(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	mustOpenStore(t, storeConfig(c, "ev3"))
	adm := admin(t, c)
	rcs, err := adm.DescribeTopicConfigs(ctx, EvidenceTopic("ev3"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rc := range rcs {
		for _, cf := range rc.Configs {
			got[cf.Key] = cf.MaybeValue()
		}
	}
	for k, v := range map[string]string{"cleanup.policy": "delete", "retention.ms": "-1", "retention.bytes": "-1", "max.message.bytes": "1048576"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, EvidenceTopic("ev4")); err != nil {
		t.Fatal(err)
	}
	_, err = OpenStore(ctx, storeConfig(c, "ev4"))
	var te *TopicError
	if !errors.As(err, &te) || te.Topic != EvidenceTopic("ev4") {
		t.Fatalf("open over a compacted evidence topic: %v, want a *TopicError naming it", err)
	}
}

// Evidence records are split to stay within the evidence topic's bound,
// whatever the dead-letter topic's bound is.
func TestEvidenceRecordsSplitWithinBound(t *testing.T) {
	t.Parallel()
	var entries []ledger.Entry
	for i := range 200 {
		entries = append(entries, ledger.Entry{Time: time.Now(), Event: ledger.EventDecided, Checkpoint: uint64(i + 1), Job: "j",
			Note: strings.Repeat("x", 100)})
	}
	recs, err := evidenceRecords(EvidenceRecord{Job: "j", Writer: EvidenceWriterSlot, Scope: "0"}, "tok", entries, 4096)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if len(r.Value) > 4096 {
			t.Errorf("record of %d bytes over the 4096 bound", len(r.Value))
		}
		rec, err := decodeEvidence("t", &kgo.Record{Value: r.Value, Headers: r.Headers})
		if err != nil {
			t.Fatal(err)
		}
		n += len(rec.Entries)
	}
	if len(recs) < 2 || n != 200 {
		t.Fatalf("%d records holding %d entries, want several holding 200", len(recs), n)
	}
}

// An evidence record never exceeds franz-go's own cap on a record batch
// (ProducerBatchMaxBytes, 1000012 by default), even when the evidence
// topic's max.message.bytes (1 MiB by default) is larger: the client
// refuses such a record with MESSAGE_TOO_LARGE before it reaches Kafka,
// at every attempt of the decision.
func TestEvidenceRecordsWithinProducerCap(t *testing.T) {
	t.Parallel()
	var entries []ledger.Entry
	size := 0
	for i := 0; size < 1_010_000; i++ {
		e := ledger.Entry{Time: time.Now(), Event: ledger.EventDecided, Checkpoint: uint64(i + 1), Job: "j",
			Note: strings.Repeat("x", 1000)}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		size += len(b) + 1
		entries = append(entries, e)
	}
	recs, err := evidenceRecords(EvidenceRecord{Job: "j", Writer: EvidenceWriterSlot, Scope: "0"}, "tok", entries,
		DefaultEvidenceMaxMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if s := framedSize(r) + batchOverhead; s > 1000012 {
			t.Errorf("evidence record of %d bytes framed: over franz-go's 1000012-byte batch cap", s)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no evidence record")
	}
}
