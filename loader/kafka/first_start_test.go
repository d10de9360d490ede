package kafka

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// memStartStore is a StartStore in memory that counts saves; commits
// says it commits the group offsets itself (OffsetCommitter).
type memStartStore struct {
	mu      sync.Mutex
	raw     []byte
	saves   int
	commits bool
}

func (m *memStartStore) CommitsGroupOffsets() bool { return m.commits }

func (m *memStartStore) FirstStart(context.Context) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.raw, m.raw != nil, nil
}

func (m *memStartStore) SaveFirstStart(_ context.Context, raw []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.raw, m.saves = append([]byte(nil), raw...), m.saves+1
	return nil
}

// With a StartStore, kafka.start latest is resolved once and persisted
// before the first record is read; a restart before any decision uses the
// persisted position, so records produced while the job was down are
// loaded (without it they would be skipped). The Connector's monitoring
// group commit is off when the store commits the offsets itself (the
// coordinator log: OffsetCommitter), on otherwise (the file coordinator's
// first-start file).
func TestStartStorePersistsFirstStart(t *testing.T) {
	t.Parallel()
	for _, commits := range []bool{true, false} {
		t.Run(map[bool]string{true: "offset-committer", false: "plain"}[commits], func(t *testing.T) {
			t.Parallel()
			testStartStorePersistsFirstStart(t, commits)
		})
	}
}

func testStartStorePersistsFirstStart(t *testing.T, commits bool) {
	e := newEnv(t, 2)
	ctx := ctxFor(t)
	e.produceIDs(0, 10, 2)
	ss := &memStartStore{commits: commits}
	cfg := e.config()
	cfg.Start = StartLatest

	first, abort := context.WithCancel(ctx)
	c := e.connector(cfg, nil, WithStartStore(ss))
	c.knobs.AfterStart = func(Position) {
		if ss.saves != 1 {
			t.Errorf("first start saved %d times before reading, want 1", ss.saves)
		}
		abort() // crash before the first decision
	}
	if err := c.Run(first); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	if got := string(ss.raw); got != `{"topic":"orders","offsets":{"0":5,"1":5}}` {
		t.Fatalf("persisted first start %s, want the end offsets at the first start", got)
	}

	e.produceIDs(10, 16, 2) // while the job is down
	c = e.connector(cfg, nil, WithStartStore(ss))
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ss.saves != 1 {
		t.Errorf("first start saved %d times, want once (never resolved again)", ss.saves)
	}
	e.checkExactlyOnce(16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	fo, err := e.adm.FetchOffsets(ctx, cfg.Group)
	o, ok := fo.Lookup(testTopic, 0)
	switch {
	case commits && err == nil && ok && o.At >= 0:
		t.Errorf("monitoring commit with an OffsetCommitter StartStore: group offset %d, want none", o.At)
	case !commits && (err != nil || !ok || o.At != 8):
		t.Errorf("monitoring commit with a plain StartStore: group offset %+v %v, want 8", o, err)
	}
}

// A persisted first start of another topic is refused.
func TestStartStoreOtherTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ss := &memStartStore{raw: []byte(`{"topic":"other","offsets":{"0":1}}`)}
	c := e.connector(e.config(), nil, WithStartStore(ss))
	err := c.Run(ctxFor(t))
	if err == nil || !strings.Contains(err.Error(), `"other"`) {
		t.Fatalf("Run with a first start of another topic: %v", err)
	}
}
