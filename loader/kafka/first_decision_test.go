package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Review P1: the first decision's start was nil (the loader's position
// before its first decision), so when Doris aborted its PRECOMMITTED txn
// ("timeout by txn manager", docs/doris-facts.md §5; the emulator's
// TimeoutPrecommitted) while the process was down, the Recover that heals
// it returned nil, the restart applied kafka.start again and, with latest
// or committed, skipped the decided rows. The connector now gives the
// loader its resolved first start (Loader.SetStart), the decision records
// it, and the heal replays the checkpoint from there.
func TestHealFirstDecisionKeepsFirstStart(t *testing.T) {
	t.Parallel()
	for _, start := range []string{StartLatest, StartCommitted} {
		t.Run(start, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1)
			ctx := ctxFor(t)
			e.produceIDs(0, 5, 1) // before the first start: skipped with latest
			cfg := e.config()
			cfg.Start = start
			if start == StartCommitted {
				// The group's committed offset skips the 5 old records, like
				// latest; the monitoring commit moves it to 12 once checkpoint
				// 1 is decided.
				var offs kadm.Offsets
				offs.Add(kadm.Offset{Topic: testTopic, Partition: 0, At: 5, LeaderEpoch: -1})
				if _, err := e.adm.CommitOffsets(ctx, cfg.Group, offs); err != nil {
					t.Fatal(err)
				}
			}
			fps := loader.NewFailpoints()
			h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
			if err != nil {
				t.Fatal(err)
			}
			run, stop := context.WithCancel(ctx)
			timedOut := make(chan int, 1)
			go func() {
				if h.Wait(run, 1) != nil {
					return
				}
				// Checkpoint 1 is decided and PRECOMMITTED: Doris times it
				// out, the process stops, then its commit attempt goes on
				// (and fails: the txn is aborted).
				timedOut <- e.srv.TimeoutPrecommitted()
				stop()
				h.Release()
			}()
			c := e.connector(cfg, fps)
			c.knobs.AfterStart = func(Position) { e.produceIDs(5, 12, 1) } // checkpoint 1: [5,12) at the row cap
			if err := c.Run(run); !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v, want it stopped in the commit of checkpoint 1", err)
			}
			st, err := checkpoint.ReadFile(e.dir)
			if err != nil || st.Decided == nil || st.Decided.ID != 1 || st.Decided.Committed {
				t.Fatalf("checkpoint store: %+v, %v; want checkpoint 1 decided, not committed", st, err)
			}
			if got := string(st.Decided.Start); got != `{"topic":"orders","offsets":{"0":5}}` {
				t.Errorf("checkpoint 1 decided with start %s, want the first start (offset 5)", got)
			}
			if n := <-timedOut; n != 1 {
				t.Fatalf("timed out %d precommitted txns, want 1 (checkpoint 1)", n)
			}
			e.produceIDs(12, 15, 1) // while the job is down

			c = e.connector(cfg, nil)
			var resumed Position
			c.knobs.AfterStart = func(p Position) { resumed = p }
			if err := e.runToEnd(ctx, c); err != nil {
				t.Fatalf("restart: %v", err)
			}
			if want := int64(5); resumed.Offsets[0] != want {
				t.Errorf("restart read from %v, want the healed checkpoint's start %d", resumed, want)
			}
			e.checkExactlyOnce(15, 0, 1, 2, 3, 4)
		})
	}
}

// The guard behind P1: a store whose first decision has no start (decided
// by an app that never called SetStart, or by an older doris-sink) and
// whose txn Doris aborted makes Recover heal it and return nil. The
// Connector refuses to resolve kafka.start again for it (that could skip
// the decided rows) and names the decision.
func TestBeginRefusesHealWithoutStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx := ctxFor(t)
	e.produceIDs(0, 3, 1)
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	ld := e.loader(fps)
	if _, err := ld.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ld.Write(ctx, []byte(`{"id":0,"v":"v0"}`)); err != nil {
		t.Fatal(err)
	}
	if err := ld.Checkpoint(ctx, []byte(`{"topic":"orders","offsets":{"0":1}}`)); err != nil {
		t.Fatal(err) // decided without SetStart: start nil
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("timed out %d txns, want 1", n)
	}
	h.Release()
	_ = ld.Close(ctx) // returns the aborted commit

	cfg := e.config()
	cfg.Start = StartLatest
	c := e.connector(cfg, nil)
	err = c.Run(ctx)
	if !errors.Is(err, errNoStart) || !strings.Contains(err.Error(), "decision 1") {
		t.Fatalf("Run: %v, want the refusal to apply kafka.start again for decision 1", err)
	}
	if got := e.ids(); len(got) != 0 {
		t.Fatalf("rows %v loaded, want none", got)
	}
}
