package coordlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

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
func TestHealOfADifferentRangeDeadLettersOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		first, second int64
	}{{"wider", 4, 8}, {"narrower", 8, 2}, {"equal", 4, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newDLEnv(t)
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

// The same config in both processes: the first drains at offset 5 and
// crashes right after deciding [0,5); records 5..13 arrive while the job
// is down; the second reads them all and its drain heals [0,14): the dead
// letters of [5,14) go out with the heal, once.
func TestHealByADrainDeadLettersOnce(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
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

// produceMore appends records [from, to) to partition 0 of orders, like
// produce; it returns the bad values.
func (e *dlEnv) produceMore(from, to int, bad map[int]bool) []string {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var bads []string
	for i := from; i < to; i++ {
		v := fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i, i)
		if bad[i] {
			v = fmt.Sprintf("bad record %d", i)
			bads = append(bads, v)
		}
		if err := cl.ProduceSync(ctxT(e.t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			e.t.Fatal(err)
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
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			e := newDLEnv(t)
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
	if got := s.producedThrough(); len(got) != 2 || got[0] != 7 || got[2] != 3 {
		t.Fatalf("old document: marks %v, want the decided end {0:7 2:3}", got)
	}
	s.doc.DeadLetters = &deadLetterInfo{TopicID: "aa", ProducedThrough: map[int32]int64{0: 9}}
	if got := s.producedThrough(); len(got) != 1 || got[0] != 9 {
		t.Fatalf("marks %v, want the recorded {0:9}", got)
	}
	s.doc.DeadLetters.TopicID = "bb"
	if got := s.producedThrough(); len(got) != 0 {
		t.Fatalf("marks of another topic incarnation %v, want none", got)
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
