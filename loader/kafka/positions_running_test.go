package kafka

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recreate deletes testTopic and creates it again (empty) with parts
// partitions: Kafka gives it a new topic ID.
func (e *env) recreate(parts int32) {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.adm.DeleteTopic(ctx, testTopic); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(ctx, parts, 1, nil, testTopic); err != nil {
		e.t.Fatal(err)
	}
}

// topicIDHex returns testTopic's current topic ID.
func (e *env) topicIDHex() string {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...)) // no cached metadata
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(context.Background(), testTopic)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		e.t.Fatalf("list topics: %v", err)
	}
	id := td[testTopic].ID
	return hex.EncodeToString(id[:])
}

// Issue 12, positions you can trust: the topic is deleted and recreated
// (and written to) while the job runs. kgo keeps the old topic ID and
// answers UNKNOWN_TOPIC_ID; the Connector sees the topic exist under a new
// ID and stops at once with a *TopicRecreatedError naming both IDs and
// every partition's decided offset against the new log, and the rebase
// command. Nothing of the new log is loaded; the rows decided before stay
// exactly once. Before the change it waited out the fail-fast grace and
// then reported the topic missing.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 8, 2)
	oldID := e.topicIDHex()
	cfg := e.config()
	cfg.CheckpointMaxRows = 4
	var once sync.Once
	// A short fetch wait and metadata age (kgo re-reads metadata twice
	// before it reports UNKNOWN_TOPIC_ID; 5 s apart by default).
	c := e.connector(cfg, nil, WithKgoOpts(kgo.FetchMaxWait(50*time.Millisecond), kgo.MetadataMinAge(10*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond })))
	c.knobs.AfterPoll = func(p Position) {
		if p.Offsets[0] < 4 || p.Offsets[1] < 4 || c.pend.records > 0 {
			return
		}
		once.Do(func() { // everything read is decided: recreate and write 3 records per partition
			e.recreate(2)
			e.produceIDs(100, 106, 2)
		})
	}
	err := c.Run(ctx)
	newID := e.topicIDHex()
	var rec *TopicRecreatedError
	if !errors.As(err, &rec) || !errors.Is(err, ErrTopicRecreated) {
		t.Fatalf("Run: %v, want a *TopicRecreatedError", err)
	}
	if rec.Topic != testTopic || rec.OldID != oldID || rec.NewID != newID || oldID == newID || rec.Checkpoint != 2 ||
		rec.Decided[0] != 4 || rec.Decided[1] != 4 || rec.LogEnd[0] != 3 || rec.LogEnd[1] != 3 {
		t.Errorf("error %+v, want topic %s %s → %s, checkpoint 2, decided 4/4 vs new log ends 3/3", rec, testTopic, oldID, newID)
	}
	for _, w := range []string{"deleted and recreated while the job ran", oldID, newID, "orders/0 decided next offset 4 vs the new log 0..3",
		"nothing of the new log was loaded", "checkpoint rebase -c <job config> --to earliest"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	e.checkExactlyOnce(8)
}

// fakeIDStore is a StartStore that recorded topic IDs (TopicIDRecorder).
type fakeIDStore struct{ ids map[string]string }

func (fakeIDStore) FirstStart(context.Context) ([]byte, bool, error) { return nil, false, nil }
func (fakeIDStore) SaveFirstStart(context.Context, []byte) error     { return nil }
func (s fakeIDStore) TopicIDs() map[string]string                    { return s.ids }

// A topic recreated after the store recorded its ID and before the
// Connector reads: refused at the start, before any record is read.
func TestTopicRecreatedBeforeFirstPoll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	oldID := e.topicIDHex()
	e.recreate(2)
	e.produceIDs(0, 6, 2)
	c := e.connector(e.config(), nil, WithStartStore(fakeIDStore{ids: map[string]string{testTopic: oldID}}))
	polled := false
	c.knobs.AfterPoll = func(Position) { polled = true }
	err := c.Run(ctx)
	var rec *TopicRecreatedError
	if !errors.As(err, &rec) || rec.OldID != oldID || rec.NewID == oldID || polled {
		t.Fatalf("Run: %v (polled %v), want a *TopicRecreatedError before the first poll", err, polled)
	}
	e.checkExactlyOnce(0)
}

// A consuming client that reads the topic under another ID than the one
// the Connector reads (as a client created by a rewind after a recreation
// would: it adopts the new ID) is refused before any record is handled.
func TestFetchUnderAnotherTopicIDRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 6, 2)
	c := e.connector(e.config(), nil)
	c.knobs.AfterStart = func(Position) {
		c.mu.Lock()
		c.tids[testTopic] = topicID{0xd0, 0x1d} // the ID "recorded" before a recreation
		c.mu.Unlock()
	}
	err := c.Run(ctx)
	var rec *TopicRecreatedError
	if !errors.As(err, &rec) || rec.OldID != "d01d0000000000000000000000000000" || rec.NewID != e.topicIDHex() {
		t.Fatalf("Run: %v, want a *TopicRecreatedError naming both IDs", err)
	}
	e.checkExactlyOnce(0)
}

// holdFetches makes kfake hold the first fetch of testTopic at which
// every partition's offset is at least from[p] until release is closed
// (kfake SleepControl: the cluster serves other requests meanwhile);
// held is closed when it is held. Fetch sessions must be off
// (kgo.DisableFetchSessions) so that every fetch names every partition.
func (e *env) holdFetches(from map[int32]int64) (held, release chan struct{}) {
	e.t.Helper()
	td, err := e.adm.ListTopics(context.Background(), testTopic)
	if err != nil {
		e.t.Fatal(err)
	}
	id := td[testTopic].ID
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := false
	e.kc.ControlKey(kmsg.Fetch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		if done {
			return nil, nil, false
		}
		for _, t := range req.(*kmsg.FetchRequest).Topics {
			if t.Topic != testTopic && t.TopicID != id {
				continue
			}
			n := 0
			for _, p := range t.Partitions {
				if p.FetchOffset >= from[p.Partition] {
					n++
				}
			}
			if n == len(from) && len(t.Partitions) == len(from) {
				done = true
				once.Do(func() { close(held) })
				e.kc.SleepControl(func() { <-release })
			}
		}
		return nil, nil, false
	})
	return held, release
}

// Issue 12, positions you can trust: retention removes records past the
// job's position while it runs. kfake holds the job's fetch at offsets
// 4/4 while 6 more records per partition are produced and partition 0's
// log start moves to 8: the fetch answers OFFSET_OUT_OF_RANGE, and Run
// stops with a *PositionOutOfRangeError (the type the start-up check
// returns) naming orders/0, the decided offset 4, the log range 8..10,
// the 4 records lost and the rebase command. Before the change the error
// named neither the log start nor what is lost.
func TestOffsetOutOfRangeWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 8, 2)
	cfg := e.config()
	cfg.CheckpointMaxRows = 4
	held, release := e.holdFetches(map[int32]int64{0: 4, 1: 4})
	c := e.connector(cfg, nil, WithKgoOpts(kgo.DisableFetchSessions()))
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	select {
	case <-held:
	case err := <-errc:
		t.Fatalf("Run ended before its fetch at 4/4 was held: %v", err)
	}
	e.produceIDs(8, 20, 2) // offsets 4..9 of each partition
	if _, err := e.adm.DeleteRecords(context.Background(), kadm.Offsets{testTopic: {0: {Topic: testTopic, Partition: 0, At: 8}}}); err != nil {
		t.Fatal(err)
	}
	close(release)
	err := <-errc
	var oor *PositionOutOfRangeError
	if !errors.As(err, &oor) || !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("Run: %v, want a *PositionOutOfRangeError wrapping OFFSET_OUT_OF_RANGE", err)
	}
	if oor.Topic != testTopic || !oor.Running || oor.Checkpoint != 2 || len(oor.Partitions) != 1 {
		t.Fatalf("error %+v, want orders, running, checkpoint 2, one partition", oor)
	}
	if p := oor.Partitions[0]; p.Partition != 0 || p.Stored != 4 || p.Read != 4 || p.LogStart != 8 || p.LogEnd != 10 || p.Lost() != 4 {
		t.Errorf("partition %+v, want orders/0 stored 4, read 4, log 8..10, 4 lost", p)
	}
	for _, w := range []string{"while the job ran", "orders/0 next offset 4 is behind the log start 8 (log end 10)",
		"records 4..7 (4 records)", "checkpoint rebase -c <job config> --to earliest"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	e.checkExactlyOnce(8)
}

// startAtStore is a StartStore whose persisted first start is pos.
type startAtStore struct{ pos string }

func (s startAtStore) FirstStart(context.Context) ([]byte, bool, error) {
	return []byte(s.pos), true, nil
}
func (startAtStore) SaveFirstStart(context.Context, []byte) error { return nil }

// A client reading a recreated topic (under its new ID) at the old
// offsets, beyond the new log's end, gets OFFSET_OUT_OF_RANGE: the
// Connector says the topic was recreated, not that the offset is out of
// range.
func TestOutOfRangeOnRecreatedTopicSaysRecreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 6, 2)
	c := e.connector(e.config(), nil, WithStartStore(startAtStore{pos: `{"topic":"orders","offsets":{"0":10,"1":10}}`}))
	c.knobs.AfterStart = func(Position) {
		c.mu.Lock()
		c.tids[testTopic] = topicID{0xd0, 0x1d} // the old topic's ID
		c.mu.Unlock()
	}
	err := c.Run(ctx)
	var rec *TopicRecreatedError
	var oor *PositionOutOfRangeError
	if !errors.As(err, &rec) || errors.As(err, &oor) || rec.Decided[0] != 10 || rec.LogEnd[0] != 3 {
		t.Fatalf("Run: %v, want a *TopicRecreatedError (decided 10 vs the new log 0..3), not out of range", err)
	}
	e.checkExactlyOnce(0)
}
