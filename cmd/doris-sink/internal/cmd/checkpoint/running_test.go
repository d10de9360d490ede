package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// buildWith builds the job with extra connector options.
func (e *rebaseEnv) buildWith(opts ...kafka.Opt) (*run.Job, error) {
	e.t.Helper()
	cfg := e.config()
	log, err := run.NewLogger(config.Log{Level: "info"}, &e.logs)
	if err != nil {
		e.t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { client.Close() })
	return run.Build(cfg, run.Deps{Doris: client, Logger: log, FenceCheckInterval: time.Millisecond,
		ConnectorOpts: append([]kafka.Opt{kafka.WithRecoverBackoff(0, 0)}, opts...)})
}

// dorisClient is a Doris client of the job's config, closed with the test.
func (e *rebaseEnv) dorisClient() *doris.Client {
	e.t.Helper()
	client, err := cmdutil.NewDorisClient(e.config(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { client.Close() })
	return client
}

// quickKgo makes the consumer notice a deleted topic sooner (kgo re-reads
// metadata and retries a fetch several times before it reports
// UNKNOWN_TOPIC_ID; seconds apart by default).
func quickKgo() kafka.Opt {
	return kafka.WithKgoOpts(kgo.FetchMaxWait(50*time.Millisecond), kgo.MetadataMinAge(10*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
}

// Issue 12, positions you can trust: the topic is deleted, recreated and
// written to while the job runs (both coordinators). The job stops at once
// with a *kafka.TopicRecreatedError (old and new topic ID, each
// partition's decided offset against the new log, the rebase command); no
// record of the new log is loaded, and a restart is refused too (kafka:
// the recorded topic ID; file: the stored offsets beyond the new log end).
// After `checkpoint rebase --to earliest` the new records load exactly
// once, and the old rows stay exactly once.
func TestRecreatedWhileRunningThenRebase(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(4) // two checkpoints of 4 rows (checkpoint_max_rows 4)
			old := append(append([]int64{}, e.ids[0]...), e.ids[1]...)
			var once sync.Once
			job, err := e.buildWith(quickKgo(), kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
				if p.Offsets[0] < 4 || p.Offsets[1] < 4 {
					return
				}
				once.Do(func() { // both checkpoints are decided at the row cap
					e.recreate()
					e.produce(3)
				})
			}}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = job.Connector.Run(ctx)
			var rec *kafka.TopicRecreatedError
			if !errors.As(err, &rec) || !errors.Is(err, kafka.ErrTopicRecreated) || rec.OldID == rec.NewID ||
				rec.Decided[0] != 4 || rec.Decided[1] != 4 || rec.LogEnd[0] != 3 {
				t.Fatalf("run: %v, want a *kafka.TopicRecreatedError (decided 4/4, new log end 3)\nlogs:\n%s", err, e.logs.String())
			}
			for _, w := range []string{"deleted and recreated while the job ran", rec.OldID, rec.NewID, "orders/1 decided next offset 4 vs the new log 0..3",
				"checkpoint rebase -c <job config> --to earliest"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			e.checkRows(old)
			_, err = e.build(nil)
			var oor *run.PositionOutOfRangeError
			var stored *coordlog.TopicRecreatedError
			if coord == config.CoordinatorKafka && !errors.As(err, &stored) || coord == config.CoordinatorFile && !errors.As(err, &oor) {
				t.Fatalf("restart on the recreated topic: %v, want a refusal", err)
			}
			if !errors.Is(err, kafka.ErrTopicRecreated) && coord == config.CoordinatorKafka {
				t.Errorf("the start-time refusal does not match kafka.ErrTopicRecreated: %v", err)
			}
			e.checkRows(old)
			// With Doris, as the command asks it: the last decision may not be
			// marked committed yet when the job stopped (VISIBLE settles it).
			if _, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseEarliest, Doris: e.dorisClient()}); err != nil {
				t.Fatalf("rebase: %v", err)
			}
			e.runTo()
			e.checkRows(append(old, append(e.ids[0], e.ids[1]...)...))
		})
	}
}

// holdFetch makes kfake hold the job's first fetch of "orders" that asks
// for every partition at offsets ≥ from until release is closed (kfake
// SleepControl: other requests are served meanwhile); held is closed then.
// The job must run without fetch sessions, so that a fetch names every
// partition.
func (e *rebaseEnv) holdFetch(from map[int32]int64) (held, release chan struct{}) {
	e.t.Helper()
	td, err := e.adm.ListTopics(context.Background(), "orders")
	if err != nil {
		e.t.Fatal(err)
	}
	id := td["orders"].ID
	held, release = make(chan struct{}), make(chan struct{})
	done := false
	e.kafka.ControlKey(kmsg.Fetch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.kafka.KeepControl()
		if done {
			return nil, nil, false
		}
		for _, t := range req.(*kmsg.FetchRequest).Topics {
			if t.Topic != "orders" && t.TopicID != id || len(t.Partitions) != len(from) {
				continue
			}
			at := 0
			for _, p := range t.Partitions {
				if p.FetchOffset >= from[p.Partition] {
					at++
				}
			}
			if at == len(from) {
				done = true
				close(held)
				e.kafka.SleepControl(func() { <-release })
				break
			}
		}
		return nil, nil, false
	})
	return held, release
}

// Issue 12, positions you can trust: retention deletes records past the
// job's position while it runs (both coordinators). The job's fetch at
// 4/4 is held while 6 records per partition are produced and partition
// 0's log start moves to 8; the fetch answers OFFSET_OUT_OF_RANGE and the
// job stops with the start-time error type, *run.PositionOutOfRangeError,
// naming orders/0, its decided offset 4, the log start 8, the 4 records
// lost and the rebase command. The restart says the same; after
// `checkpoint rebase --to earliest` (partition 0 from 8, partition 1
// keeps 4) every record still in the log is loaded exactly once.
func TestOutOfRangeWhileRunningThenRebase(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(4)
			held, release := e.holdFetch(map[int32]int64{0: 4, 1: 4})
			job, err := e.buildWith(kafka.WithKgoOpts(kgo.DisableFetchSessions()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- job.Connector.Run(ctx) }()
			select {
			case <-held:
			case err := <-errc:
				t.Fatalf("run ended before its fetch at 4/4: %v", err)
			}
			want := append(append([]int64{}, e.ids[0]...), e.ids[1]...)
			e.produce(6)
			if _, err := e.adm.DeleteRecords(ctx, kadm.Offsets{"orders": {0: {Topic: "orders", Partition: 0, At: 8}}}); err != nil {
				t.Fatal(err)
			}
			close(release)
			err = <-errc
			var oor *run.PositionOutOfRangeError
			if !errors.As(err, &oor) || !oor.Running || len(oor.Partitions) != 1 || oor.Partitions[0].Stored != 4 ||
				oor.Partitions[0].LogStart != 8 || oor.Partitions[0].Lost() != 4 {
				t.Fatalf("run: %v, want a running *run.PositionOutOfRangeError for orders/0 at 4 (log start 8)\nlogs:\n%s", err, e.logs.String())
			}
			for _, w := range []string{"orders/0 next offset 4 is behind the log start 8", "records 4..7 (4 records)", "checkpoint rebase"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			e.checkRows(want)
			_, err = e.build(nil)
			if !errors.As(err, &oor) || oor.Running || oor.Partitions[0].Stored != 4 || oor.Partitions[0].LogStart != 8 {
				t.Fatalf("restart: %v, want the start-time *run.PositionOutOfRangeError for orders/0 at 4", err)
			}
			// With Doris, as the command asks it: the last decision may not be
			// marked committed yet when the job stopped (VISIBLE settles it).
			if _, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseEarliest, Doris: e.dorisClient()}); err != nil {
				t.Fatalf("rebase: %v", err)
			}
			e.runTo()
			want = append(want, e.ids[0][8:]...)
			want = append(want, e.ids[1][4:]...)
			e.checkRows(want)
		})
	}
}

// Issue 12: a rebase while a decided checkpoint is not committed is
// refused (both coordinators), naming the checkpoint, its label and txn
// and the ways out, and changes nothing: without a Doris answer (the
// store alone), with Doris holding it PRECOMMITTED (commit it, start the
// job, or checkpoint resolve), and with Doris having aborted it (start the
// job to heal it, or checkpoint resolve). Starting the job then settles it
// and every record is loaded exactly once.
func TestRebaseRefusesUncommittedDecision(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(3) // 6 records: one decision of 4 rows, crashed before its commit
			fps := loader.NewFailpoints()
			if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
				t.Fatal(err)
			}
			job, err := e.buildFP(nil, fps)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("run: %v, want a crash after decide", err)
			}
			before := readState(t, e)
			d := before.Decided
			if d == nil || d.Committed {
				t.Fatalf("decided %+v, want one not committed", d)
			}
			cfg := e.config()
			client, err := cmdutil.NewDorisClient(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			names := []string{fmt.Sprintf("checkpoint %d", d.ID), "label " + d.Label, fmt.Sprintf("txn %d", d.TxnID), "checkpoint resolve"}
			refused := func(req RebaseRequest, want ...string) {
				t.Helper()
				for _, dry := range []bool{true, false} {
					req.DryRun = dry
					_, err := Rebase(ctx, cfg, req)
					var re *RebaseRefusedError
					if !errors.As(err, &re) {
						t.Fatalf("rebase (dry run %v) over an uncommitted decision: %v, want a refusal", dry, err)
					}
					for _, w := range append(slices.Clone(names), want...) {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("refusal lacks %q: %v", w, err)
						}
					}
				}
				if after := readState(t, e); after.NextID != before.NextID || after.Decided.Committed {
					t.Fatalf("a refused rebase changed the state: %+v", after.Decided)
				}
			}
			refused(RebaseRequest{To: RebaseEarliest, AllPartitions: true}, "start the job")
			refused(RebaseRequest{To: RebaseEarliest, AllPartitions: true, Doris: client}, "PRECOMMITTED",
				fmt.Sprintf("txn commit %d", d.TxnID), "starting the job commits it")
			if err := client.AbortTxn(ctx, "db", d.TxnID); err != nil {
				t.Fatal(err)
			}
			refused(RebaseRequest{To: RebaseEarliest, AllPartitions: true, Doris: client}, "ABORTED", "start the job so that it heals")
			e.runTo() // the way out: the job heals the aborted decision and loads the rest
			e.checkRows(append(append([]int64{}, e.ids[0]...), e.ids[1]...))
		})
	}
}

// A pending `checkpoint resolve` (Kafka coordinator) is applied by the
// rebase: the decided checkpoint was committed but Doris forgot its label
// (UNKNOWN), and the topic was recreated, so the job's start is refused
// before it could apply the operator's record. Before, the rebase refused
// the uncommitted decision and the start refused the positions: no way
// out but a new job.name. Now the rebase plans as the owner will see the
// state, applies the record as the job's writer (resolution and ledger
// entry) and records the move; the new topic then loads exactly once.
func TestRebaseAppliesPendingOperatorResolution(t *testing.T) {
	t.Parallel()
	e := newRebaseEnv(t, config.CoordinatorKafka)
	e.produce(3)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	job, err := e.buildFP(nil, fps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("run: %v, want a crash after decide", err)
	}
	d := readState(t, e).Decided
	client := e.dorisClient()
	if err := client.CommitTxn(ctx, "db", d.TxnID); err != nil {
		t.Fatal(err)
	}
	var decided []int64
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		decided = append(decided, r[0].(int64))
	}
	if e.doris.ExpireLabels("db") == 0 {
		t.Fatal("no label expired")
	}
	e.recreate()
	e.produce(2)
	if _, err := e.build(nil); !errors.Is(err, kafka.ErrTopicRecreated) {
		t.Fatalf("start on the recreated topic: %v, want the recreated-topic refusal", err)
	}
	var re *RebaseRefusedError
	if _, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseEarliest, Doris: client}); !errors.As(err, &re) ||
		!strings.Contains(err.Error(), "UNKNOWN") || !strings.Contains(err.Error(), "checkpoint resolve") {
		t.Fatalf("rebase over an uncommitted decision Doris forgot: %v, want a refusal naming checkpoint resolve", err)
	}
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdResolve(f, nil)
	cmd.SetArgs([]string{"-c", e.configFile(), "--checkpoint", fmt.Sprint(d.ID), "--assume", "visible", "--yes"})
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SetContext(ctx)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("checkpoint resolve: %v\n%s", err, errOut.String())
	}
	if dry, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseEarliest, Doris: client, DryRun: true}); err != nil || !dry.DryRun || dry.Checkpoint <= d.ID {
		t.Fatalf("dry run with the operator's resolution pending: %+v %v", dry, err)
	}
	if _, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseEarliest, Doris: client}); err != nil {
		t.Fatalf("rebase with the operator's resolution pending: %v", err)
	}
	st := readState(t, e)
	if len(st.Resolved) != 1 || st.Resolved[0].CheckpointID != d.ID || st.Resolved[0].Assumed != cp.ResolvedVisible {
		t.Errorf("resolutions after the rebase: %+v, want checkpoint %d assumed visible", st.Resolved, d.ID)
	}
	e.runTo()
	e.checkRows(append(decided, append(e.ids[0], e.ids[1]...)...))
}
