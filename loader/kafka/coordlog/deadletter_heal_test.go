package coordlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Review of issue 11, finding 1: a heal's range is not the healed
// checkpoint's decided range (the row cap, the timer, the dead-letter
// buffer bound and a drain cut it elsewhere), and Save dropped every
// staged dead letter of a heal: a wider heal lost the dead letters past
// the first decision's end, a narrower one had the next checkpoint produce
// the rest again. With the document's per-partition "produced through"
// mark every decision produces exactly the staged dead letters no earlier
// decision produced.
//
// With several source topics the marks are per topic: every bad record of
// each topic is dead-lettered once too.
func TestHealOfADifferentRangeDeadLettersOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		first, second int64
	}{{"wider", 4, 8}, {"narrower", 8, 2}, {"equal", 4, 4}} {
		forTopicSets(t, tc.name, func(t *testing.T, topics []string) {
			e := newDLEnvTopics(t, topics)
			bads := e.produce(14, testBad)
			fps := loader.NewFailpoints()
			if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
				t.Fatal(err)
			}
			e.maxRows = tc.first
			p := e.process(14, fps, nil)
			if err := p.conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("first run: %v, want a crash after the first decision", err)
			}
			if n := e.srv.TimeoutPrecommitted(); n != 1 {
				t.Fatalf("aborted %d precommitted txns, want the decided one", n)
			}
			e.maxRows = tc.second // the operator retuned delivery.checkpoint_max_rows
			q := e.process(14, nil, nil)
			if err := q.conn.Run(ctxT(t)); err != nil {
				t.Fatalf("second run: %v", err)
			}
			e.checkExactlyOnce(14, testBad, bads)
		})
	}
}

// twoTopics are the source topics of the several-topic variants of the
// dead-letter heal tests.
var twoTopics = []string{"orders", "events"}

// forTopicSets runs f as parallel subtests name/"one topic" (orders) and
// name/"two topics" (twoTopics).
func forTopicSets(t *testing.T, name string, f func(t *testing.T, topics []string)) {
	t.Helper()
	for _, ts := range []struct {
		name   string
		topics []string
	}{{"one topic", nil}, {"two topics", twoTopics}} {
		t.Run(strings.TrimPrefix(name+"/"+ts.name, "/"), func(t *testing.T) {
			t.Parallel()
			f(t, ts.topics)
		})
	}
}

// newDLEnvTopics is newDLEnv reading topics (nil: orders alone), each
// extra topic with 2 partitions.
func newDLEnvTopics(t *testing.T, topics []string) *dlEnv {
	t.Helper()
	var opts []kfake.Opt
	for _, topic := range topics {
		if topic != "orders" {
			opts = append(opts, kfake.SeedTopics(2, topic))
		}
	}
	e := newDLEnv(t, opts...)
	e.topics = topics
	return e
}

// The same config in both processes: the first drains at offset 5 and
// crashes right after deciding [0,5); records 5..13 arrive while the job
// is down; the second reads them all and its drain heals [0,14): the dead
// letters of [5,14) go out with the heal, once.
func TestHealByADrainDeadLettersOnce(t *testing.T) {
	t.Parallel()
	forTopicSets(t, "", testHealByADrainDeadLettersOnce)
}

func testHealByADrainDeadLettersOnce(t *testing.T, topics []string) {
	e := newDLEnvTopics(t, topics)
	e.maxRows = 1000
	bads := e.produce(5, testBad) // offsets 0..4
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	p := e.process(5, fps, nil)
	if err := p.conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("first run: %v, want a crash after the first decision", err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("aborted %d precommitted txns, want the decided one", n)
	}
	bads = append(bads, e.produceMore(5, 14, testBad)...)
	q := e.process(14, nil, nil)
	if err := q.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("second run: %v", err)
	}
	e.checkExactlyOnce(14, testBad, bads)
}

// produceMore appends records [from, to) to partition 0 of each source
// topic, like produce; it returns the bad values.
func (e *dlEnv) produceMore(from, to int, bad map[int]bool) []string {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var bads []string
	for k, topic := range e.sourceTopics() {
		for i := from; i < to; i++ {
			v := fmt.Sprintf(`{"id":%d,"v":"v%d"}`, rowID(k, i), i)
			if bad[i] {
				v = badValue(topic, k, i)
				bads = append(bads, v)
			}
			if err := cl.ProduceSync(ctxT(e.t), &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return bads
}

// A wider heal crashes at each failpoint of its own transaction (dead
// letters produced, not committed; committed, the loader not told), or
// its precommit fails once (a rewind re-reads the heal): a third process
// (or the same one after the rewind) still leaves every bad record once
// in the dead-letter topic and every good one once in Doris.
func TestWiderHealCrashesDeadLettersOnce(t *testing.T) {
	t.Parallel()
	for _, fp := range append(append([]string(nil), AllFailpoints...), loader.FailAfterPrecommit) {
		forTopicSets(t, fp, func(t *testing.T, topics []string) {
			e := newDLEnvTopics(t, topics)
			bads := e.produce(14, testBad)
			fps := loader.NewFailpoints()
			if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
				t.Fatal(err)
			}
			e.maxRows = 4
			if err := e.process(14, fps, nil).conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("first run: %v, want a crash after the first decision", err)
			}
			if n := e.srv.TimeoutPrecommitted(); n != 1 {
				t.Fatalf("aborted %d precommitted txns, want the decided one", n)
			}
			e.maxRows = 8 // the heal covers [0,9): dead letters 5 and 6 are new
			if fp == loader.FailAfterPrecommit {
				fps := loader.NewFailpoints()
				if _, err := fps.Arm(loader.FailAfterPrecommit, loader.ReturnError(nil).Times(1)); err != nil {
					t.Fatal(err)
				}
				if err := e.process(14, fps, nil).conn.Run(ctxT(t)); err != nil {
					t.Fatalf("second run: %v", err)
				}
				e.checkExactlyOnce(14, testBad, bads)
				return
			}
			ctx, kill := context.WithCancel(ctxT(t))
			defer kill()
			crashes := 0
			errKilled := errors.New("killed")
			q := e.process(14, nil, func(name string) error {
				if name != fp || crashes > 0 {
					return nil
				}
				crashes++
				kill()
				return errKilled
			})
			if err := q.conn.Run(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("second run: %v, want it killed at %s", err, fp)
			}
			if crashes != 1 {
				t.Fatalf("failpoint %s hit %d times, want 1", fp, crashes)
			}
			e.maxRows = 2
			if err := e.process(14, nil, nil).conn.Run(ctxT(t)); err != nil {
				t.Fatalf("third run: %v", err)
			}
			e.checkExactlyOnce(14, testBad, bads)
		})
	}
}

// A document written before the dead-letter marks reads as "produced
// through the decided end" (what those versions did); a mark recorded for
// another incarnation of the source topic (a rebase onto a recreated
// topic) starts afresh.
func TestProducedThroughOfOldDocuments(t *testing.T) {
	t.Parallel()
	st := checkpoint.NewState(checkpoint.Owner{Job: "j", Writer: "w", DB: "db", Table: "t"})
	st.Decided = &checkpoint.Decision{ID: 3, End: []byte(`{"topic":"orders","offsets":{"0":7,"2":3}}`)}
	s := &Store{topic: "orders", tid: "aa", last: st}
	if got, _ := s.producedThrough(); fmt.Sprint(got) != "map[orders:map[0:7 2:3]]" {
		t.Fatalf("old document: marks %v, want the decided end {0:7 2:3}", got)
	}
	s.doc.DeadLetters = &deadLetterInfo{TopicID: "aa", ProducedThrough: map[int32]int64{0: 9}}
	if got, _ := s.producedThrough(); fmt.Sprint(got) != "map[orders:map[0:9]]" {
		t.Fatalf("marks %v, want the recorded {0:9}", got)
	}
	s.doc.DeadLetters.TopicID = "bb"
	if got, stale := s.producedThrough(); len(got["orders"]) != 0 || !stale["orders"] {
		t.Fatalf("marks of another topic incarnation %v (stale %v), want none", got, stale)
	}
}

// A job reading several topics: the one-topic marks of a one-topic job
// switched to kafka.topics are the marks of the topic its positions name
// (the other topics have none); per-topic marks of a recreated topic
// restart; a topic with no marks is produced through the decided end.
func TestProducedThroughPerTopic(t *testing.T) {
	t.Parallel()
	st := checkpoint.NewState(checkpoint.Owner{Job: "j", Writer: "w", DB: "db", Table: "t"})
	st.Decided = &checkpoint.Decision{ID: 3, End: []byte(`{"topic":"orders","offsets":{"0":7}}`)}
	s := &Store{tids: map[string]string{"orders": "aa", "events": "cc"}, last: st}
	s.doc.Source = sourceInfo{Topic: "orders", TopicID: "aa"}
	s.doc.DeadLetters = &deadLetterInfo{TopicID: "aa", ProducedThrough: map[int32]int64{0: 9}}
	if got, _ := s.producedThrough(); fmt.Sprint(got) != "map[orders:map[0:9]]" {
		t.Fatalf("one-topic marks read with several topics: %v, want orders {0:9}", got)
	}
	st.Decided.End = []byte(`{"topics":{"events":{"1":4},"orders":{"0":7}}}`)
	s.doc.DeadLetters = &deadLetterInfo{ProducedThroughTopics: map[string]topicMarks{
		"orders": {TopicID: "old", Partitions: map[int32]int64{0: 9}}}}
	got, stale := s.producedThrough()
	if fmt.Sprint(got) != "map[events:map[1:4] orders:map[]]" || !stale["orders"] || stale["events"] {
		t.Fatalf("marks %v stale %v, want orders restarted (recreated) and events through the decided end", got, stale)
	}
}

// Review of issue 11, finding 4: the rows bisection found Doris refuses
// lived in the process only, so healing their decision after a restart
// sent them to Doris again, which refused the heal (a heal is never
// bisected) and stopped the job. They are recorded with the decision:
// bisect, decide the checkpoint holding the refused row's dead letter,
// crash right after that transaction committed, Doris aborts the txn; the
// restarted job heals it (over a wider range) without a refused load:
// every good record once, the refused one dead-lettered once.
func TestHealAfterRestartDeadLettersRefusedRowsAgain(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.maxRows = 8
	e.refused = map[int]bool{3: true}
	const n = 12
	bads := e.produce(n, nil)
	ctx, kill := context.WithCancel(ctxT(t))
	defer kill()
	crashes := 0
	p := e.process(n, nil, func(name string) error {
		if name != FailDeadLettersCommitted || crashes > 0 {
			return nil
		}
		crashes++
		kill()
		return errors.New("killed")
	})
	if err := p.conn.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want it killed after the decision with the refused row's dead letter", err)
	}
	if crashes != 1 || p.conn.Metrics().CheckpointFailures.Load() == 0 {
		t.Fatalf("crashes %d, refused loads %d: want a bisection, then the crash", crashes, p.conn.Metrics().CheckpointFailures.Load())
	}
	if rows := p.store.RefusedRows(); len(rows) != 0 {
		t.Fatalf("the crashed store recorded %v in memory, want nothing (its write was not confirmed)", rows)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("aborted %d precommitted txns, want the decided one", n)
	}
	q := e.process(n, nil, nil)
	if rows := q.store.RefusedRows(); len(rows) != 1 || rows[0].Offset != 3 || rows[0].Partition != 0 ||
		rows[0].Topic != "orders" || !strings.Contains(rows[0].Reason, "_load_error_log") {
		t.Fatalf("refused rows recorded with the decision: %+v, want orders/0@3 with Doris's reason", rows)
	}
	if err := q.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("second run (the heal): %v", err)
	}
	if f := q.conn.Metrics().CheckpointFailures.Load(); f != 0 {
		t.Errorf("the heal made %d refused loads, want none", f)
	}
	e.checkExactlyOnce(n, map[int]bool{3: true}, bads)
	healed := 0
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Event == ledger.EventHealed {
			healed++
		}
	}
	if healed != 1 {
		t.Fatalf("%d healed ledger entries, want 1", healed)
	}
}

// stagedLetter is a dead letter with the origin headers the connector
// sets.
func stagedLetter(part int32, off int64, reason kafka.DeadLetterReason, why string) *kgo.Record {
	return &kgo.Record{Topic: dlTopic, Value: []byte("x"), Headers: []kgo.RecordHeader{
		{Key: kafka.HeaderError, Value: []byte("refused by Doris at precommit: " + why)},
		{Key: kafka.HeaderReason, Value: []byte(reason)},
		{Key: kafka.HeaderTopic, Value: []byte("orders")},
		{Key: kafka.HeaderPartition, Value: []byte(strconv.Itoa(int(part)))},
		{Key: kafka.HeaderOffset, Value: []byte(strconv.FormatInt(off, 10))},
	}}
}

// What a decision produces and records: only the staged dead letters at or
// past the marks; the refused rows from the decided start on, bounded by
// MaxRefusedRows; no record at all while nothing needs one (the document
// stays readable by versions without it).
func TestDecisionDeadLetterRecord(t *testing.T) {
	t.Parallel()
	pos := func(off int64) []byte { return fmt.Appendf(nil, `{"topic":"orders","offsets":{"0":%d}}`, off) }
	st := checkpoint.NewState(checkpoint.Owner{Job: "j", Writer: "w", DB: "db", Table: "t"})
	st.Decided = &checkpoint.Decision{ID: 3, Start: pos(0), End: pos(7)}
	s := &Store{topic: "orders", tid: "aa", last: st, log: &Log{log: slog.New(slog.DiscardHandler), topic: "state"}}
	if _, info := s.deadLettersFor(&checkpoint.Decision{ID: 4, Start: pos(7), End: pos(9)}); info != nil {
		t.Fatalf("no dead letters ever: record %+v, want none", info)
	}
	// A heal narrower than the decision before: the marks stay at 7, which
	// the end (5) does not tell.
	_, info := s.deadLettersFor(&checkpoint.Decision{ID: 3, Start: pos(0), End: pos(5)})
	if info == nil || info.ProducedThrough[0] != 7 {
		t.Fatalf("narrower heal: record %+v, want produced through 7", info)
	}
	s.doc.DeadLetters = &deadLetterInfo{TopicID: "aa", ProducedThrough: map[int32]int64{0: 7},
		Refused: []kafka.RefusedRow{{Topic: "orders", Partition: 0, Offset: 1, Reason: "old"}, {Topic: "orders", Partition: 0, Offset: 6, Reason: "r6"}}}
	s.staged = []*kgo.Record{stagedLetter(0, 6, kafka.ReasonRejected, "r6"), stagedLetter(0, 8, kafka.ReasonConvert, ""),
		stagedLetter(0, 9, kafka.ReasonRejected, "r9")}
	letters, info := s.deadLettersFor(&checkpoint.Decision{ID: 4, Start: pos(5), End: pos(10)})
	if len(letters) != 2 || letters[0] != s.staged[1] || letters[1] != s.staged[2] {
		t.Fatalf("produced %d letters, want those at 8 and 9 (6 was produced before)", len(letters))
	}
	if info.ProducedThrough[0] != 10 || fmt.Sprint(info.Refused) != "[{orders 0 6 r6} {orders 0 9 r9}]" {
		t.Fatalf("record %+v, want produced through 10 and refused 6 and 9 (1 is before the decided start)", info)
	}
	s.staged = nil
	for i := range MaxRefusedRows + 10 {
		s.staged = append(s.staged, stagedLetter(0, int64(100+i), kafka.ReasonRejected, strings.Repeat("é", 300)))
	}
	_, info = s.deadLettersFor(&checkpoint.Decision{ID: 5, Start: pos(100), End: pos(1000)})
	if len(info.Refused) != MaxRefusedRows || info.Refused[0].Offset != 100 || len(info.Refused[0].Reason) > maxRefusedReason {
		t.Fatalf("%d refused rows recorded (first %+v), want the %d lowest, reasons cut to %d bytes", len(info.Refused),
			info.Refused[0], MaxRefusedRows, maxRefusedReason)
	}
}

// stagedLetterOf is stagedLetter of a source topic.
func stagedLetterOf(topic string, part int32, off int64) *kgo.Record {
	r := stagedLetter(part, off, kafka.ReasonConvert, "")
	for i := range r.Headers {
		if r.Headers[i].Key == kafka.HeaderTopic {
			r.Headers[i].Value = []byte(topic)
		}
	}
	return r
}

// With several topics each letter is filtered against its own topic's
// mark and each topic's mark is raised to the decision's end for the
// topic (before, letters of any topic but a one-topic job's were produced
// by every decision staging them: a heal produced them twice).
func TestDecisionDeadLetterRecordPerTopic(t *testing.T) {
	t.Parallel()
	st := checkpoint.NewState(checkpoint.Owner{Job: "j", Writer: "w", DB: "db", Table: "t", Source: "kafka"})
	st.Decided = &checkpoint.Decision{ID: 3, Start: []byte(`{"topics":{"a":{"0":0},"b":{"0":0}}}`),
		End: []byte(`{"topics":{"a":{"0":4},"b":{"0":6}}}`)}
	s := &Store{tids: map[string]string{"a": "aa", "b": "bb"}, last: st,
		log: &Log{log: slog.New(slog.DiscardHandler), topic: "state"}}
	s.doc.DeadLetters = &deadLetterInfo{ProducedThroughTopics: map[string]topicMarks{
		"a": {TopicID: "aa", Partitions: map[int32]int64{0: 4}}, "b": {TopicID: "bb", Partitions: map[int32]int64{0: 6}}}}
	s.staged = []*kgo.Record{stagedLetterOf("a", 0, 3), stagedLetterOf("a", 0, 5), stagedLetterOf("b", 0, 5),
		stagedLetterOf("b", 0, 7)}
	// A heal of checkpoint 3 wider than its decision: a@3 and b@5 were
	// produced with it.
	letters, info := s.deadLettersFor(&checkpoint.Decision{ID: 3, Start: st.Decided.Start,
		End: []byte(`{"topics":{"a":{"0":8},"b":{"0":9}}}`)})
	if len(letters) != 2 || letters[0] != s.staged[1] || letters[1] != s.staged[3] {
		t.Fatalf("produced %d letters, want a@5 and b@7", len(letters))
	}
	if info == nil || info.ProducedThrough != nil || fmt.Sprint(info.ProducedThroughTopics) != "map[a:{aa map[0:8]} b:{bb map[0:9]}]" {
		t.Fatalf("record %+v, want per-topic marks a through 8, b through 9", info)
	}
}

// A one-topic job (orders) decides a checkpoint with dead letters and
// crashes; restarted reading [orders, events] (its store adopted,
// StoreConfig.PreviousSources) it heals that checkpoint over a wider or a
// narrower range:
// the one-topic marks count as orders' marks, so orders' dead letters are
// not produced again, and events' are produced once.
func TestHealAfterSwitchToSeveralTopicsDeadLettersOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		first, second int64
	}{{"wider", 4, 8}, {"narrower", 8, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testHealAfterSwitch(t, tc.first, tc.second)
		})
	}
}

func testHealAfterSwitch(t *testing.T, first, second int64) {
	e := newDLEnvTopics(t, twoTopics)
	e.topics = nil // orders alone first
	bads := e.produce(14, testBad)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	e.maxRows = first
	if err := e.process(14, fps, nil).conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("first run: %v, want a crash after the first decision", err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("aborted %d precommitted txns, want the decided one", n)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 14 {
		v := fmt.Sprintf(`{"id":%d,"v":"v%d"}`, rowID(1, i), i)
		if testBad[i] {
			v = badValue("events", 1, i)
			bads = append(bads, v)
		}
		if err := cl.ProduceSync(ctxT(t), &kgo.Record{Topic: "events", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	e.topics, e.maxRows = twoTopics, second
	if err := e.process(14, nil, nil).conn.Run(ctxT(t)); err != nil {
		t.Fatalf("second run (two topics): %v", err)
	}
	e.checkExactlyOnce(14, testBad, bads)
}
