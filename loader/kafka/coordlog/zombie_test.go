package coordlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// zombieEnv is one kfake cluster (the coordinator log) and one Doris
// emulator shared by the incarnations of job "zb".
type zombieEnv struct {
	t      *testing.T
	srv    *doristest.Server
	client *doris.Client
	cfg    StoreConfig
}

func newZombieEnv(t *testing.T) *zombieEnv {
	t.Helper()
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable("db", "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root",
		MaxRetries: -1, RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &zombieEnv{t: t, srv: srv, client: client, cfg: storeConfig(newCluster(t), "zb")}
}

// syncLog is a log sink safe for the loader's goroutines.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// incarnation opens the store (fencing every earlier incarnation: its
// producer epoch is bumped) and a loader on it, recovered.
func (e *zombieEnv) incarnation(ctx context.Context, log *syncLog, sweep time.Duration, knobs *loader.TestingKnobs) *loader.Loader {
	e.t.Helper()
	st, err := OpenStore(ctx, e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ld, err := loader.New(e.client, loader.Config{Job: "zb", DB: "db", Table: "t", Source: e.cfg.Owner.Source,
		Store: st, SweepInterval: sweep, Knobs: knobs, Logger: slog.New(slog.NewTextHandler(log, nil)),
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}})
	if err != nil {
		st.Close()
		e.t.Fatal(err)
	}
	return ld
}

// recoverAt recovers ld and checks it resumes at offset want.
func (e *zombieEnv) recoverAt(ctx context.Context, ld *loader.Loader, want int64) {
	e.t.Helper()
	raw, err := ld.Recover(ctx)
	if err != nil {
		e.t.Fatalf("recover: %v", err)
	}
	var got int64
	if raw != nil {
		p, ok, err := kafka.ParsePosition(raw)
		if err != nil || !ok {
			e.t.Fatalf("recovered position %s: %v", raw, err)
		}
		got = p.Of("orders")[0]
	}
	if got != want {
		e.t.Fatalf("recovered at offset %d, want %d", got, want)
	}
}

// rows writes ids [from, to) and, with end, checkpoints at offset to.
func rows(ctx context.Context, ld *loader.Loader, from, to int64, end bool) error {
	for i := from; i < to; i++ {
		if err := ld.Write(ctx, fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)); err != nil {
			return err
		}
	}
	if !end {
		return nil
	}
	raw, err := kafka.Position{Topic: "orders", Offsets: map[int32]int64{0: to}}.MarshalJSON()
	if err != nil {
		return err
	}
	return ld.Checkpoint(ctx, json.RawMessage(raw))
}

// The zombie, through real loaders on the Kafka coordinator log:
// incarnation A decides checkpoint 1 (which announces 2) and is held
// before beginning 2; B opens the store (bumping the producer epoch fences
// A), recovers label 2 as UNKNOWN, decides 3 and 4 and stops; A then wakes,
// begins label 2, Doris precommits it, and A's decision is refused
// (fenced), after B stopped. C's start used to refuse that txn as a
// second writer. C recovers, its recovery sweep aborts the txn by id, and the
// table holds every row once.
func TestZombieLatePrecommitSweptByTheNextOwner(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	e := newZombieEnv(t)
	logs := &syncLog{}

	committed := make(chan error, 1)
	a := e.incarnation(ctx, logs, time.Hour, &loader.TestingKnobs{AfterCommit: func(id uint64, err error) {
		if id == 1 {
			committed <- err
		}
	}})
	defer a.Close(ctx)
	e.recoverAt(ctx, a, 0)
	if err := rows(ctx, a, 0, 5, true); err != nil { // decides 1, announces 2
		t.Fatal(err)
	}
	// A's background commit of 1 is recorded before B fences A (else A's
	// next checkpoint fails on that commit and aborts its own label 2).
	if err := <-committed; err != nil {
		t.Fatalf("A's commit of checkpoint 1: %v", err)
	}

	b := e.incarnation(ctx, logs, time.Hour, nil)
	e.recoverAt(ctx, b, 5) // label 2: UNKNOWN (A began nothing), unannounced
	if err := rows(ctx, b, 5, 10, true); err != nil {
		t.Fatal(err)
	}

	if err := rows(ctx, b, 10, 15, true); err != nil { // decides 4
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil { // B stops (its close sweep finds nothing)
		t.Fatal(err)
	}

	// A wakes: its begin needs no store write (2 was announced with the
	// decision of 1), its precommit succeeds, its decision is fenced.
	err := rows(ctx, a, 5, 10, true)
	if !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("zombie checkpoint: %v, want ErrFenced", err)
	}
	lbl, err := checkpoint.Owner{Job: "zb", DB: "db", Table: "t", Writer: "0"}.Label(2)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.srv.TxnByLabel("db", lbl)
	if err != nil || tx.Status != doris.TxnPrecommitted {
		t.Fatalf("zombie's label %s: %+v %v, want PRECOMMITTED", lbl, tx, err)
	}

	c := e.incarnation(ctx, logs, time.Hour, nil)
	defer c.Close(ctx)
	e.recoverAt(ctx, c, 15) // no SecondWriterError
	if got, _ := e.srv.TxnByID("db", tx.ID); got.Status != doris.TxnAborted {
		t.Fatalf("zombie txn %d is %s after C's recovery, want ABORTED", tx.ID, got.Status)
	}
	if n := c.SweepStats().Aborted.Load(); n != 1 {
		t.Errorf("C's SweepStats.Aborted = %d, want 1", n)
	}
	want := []string{"zombie sweep: aborted", "label=" + lbl, fmt.Sprintf("txn_id=%d", tx.ID), "checkpoint=2", "last_decided=4"}
	found := false
	for l := range strings.SplitSeq(logs.String(), "\n") {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(l, w)
		}
		found = found || ok
	}
	if !found {
		t.Errorf("no sweep line naming %v; logs:\n%s", want, logs.String())
	}
	if err := rows(ctx, c, 15, 20, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int{}
	got, err := e.srv.Rows("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		id, ok := r[0].(int64)
		if !ok {
			t.Fatalf("row %v: id is %T", r, r[0])
		}
		counts[id]++
	}
	for i := int64(0); i < 20; i++ {
		if counts[i] != 1 {
			t.Errorf("row %d loaded %d times, want once", i, counts[i])
		}
	}
	if len(got) != 20 {
		t.Errorf("%d rows, want 20", len(got))
	}
	txns, err := e.srv.Txns("db")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range txns {
		if x.Status == doris.TxnPrepare || x.Status == doris.TxnPrecommitted {
			t.Errorf("txn %d label %s lingers %s", x.ID, x.Label, x.Status)
		}
	}
}
