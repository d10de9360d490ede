package loader_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

var seedFlag = flag.Int64("loader.seed", 0, "seed of TestRandomCrashes (0: from LOADER_SEED or time)")

// compressFlag runs every loader test with doris.properties.compress_type
// set (gz or lz4): go test ./loader -loader.compress=gz, or LOADER_COMPRESS.
var compressFlag = flag.String("loader.compress", os.Getenv("LOADER_COMPRESS"), "compress_type of every test loader (gz, lz4; empty: none)")

const (
	testDB  = "db"
	dupDDL  = "CREATE TABLE events (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	uniqDDL = "CREATE TABLE events_u (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " +
		`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
)

// env is one emulator, one client and one store directory: what survives a
// crash of the loader.
type env struct {
	t      *testing.T
	srv    *doristest.Server
	client *doris.Client
	dir    string
	table  string
	job    string
	// doris, when set, is the Doris the loaders of e use instead of
	// client (a wrapper that observes or alters calls).
	doris loader.Doris
	// compress, when set, is the compress_type property of e's loaders
	// (unless a test sets its own); -loader.compress sets it for all.
	compress string
}

func newEnv(t *testing.T, opts ...doristest.Opt) *env {
	t.Helper()
	srv, err := doristest.NewServer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase(testDB); err != nil {
		t.Fatal(err)
	}
	for _, ddl := range []string{dupDDL, uniqDDL} {
		if err := srv.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root", MaxRetries: -1,
		RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &env{t: t, srv: srv, client: client, dir: t.TempDir(), table: "events", job: "test-job", compress: *compressFlag}
}

func (e *env) owner() checkpoint.Owner {
	return checkpoint.Owner{Job: e.job, DB: testDB, Table: e.table, Writer: "0"}
}

// config returns a Loader config on a freshly opened store of e.dir.
func (e *env) config(mut ...func(*loader.Config)) loader.Config {
	e.t.Helper()
	st, err := checkpoint.OpenFile(e.dir, e.owner())
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := loader.Config{Job: e.job, DB: testDB, Table: e.table, Store: st, LedgerDir: e.dir,
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}}
	for _, m := range mut {
		m(&cfg)
	}
	if e.compress != "" && !hasKeyFold(cfg.Properties, "compress_type") {
		props := maps.Clone(cfg.Properties)
		if props == nil {
			props = map[string]string{}
		}
		props["compress_type"] = e.compress
		cfg.Properties = props
	}
	return cfg
}

func hasKeyFold(m map[string]string, key string) bool {
	for k := range m {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func (e *env) open(mut ...func(*loader.Config)) *loader.Loader {
	e.t.Helper()
	cfg := e.config(mut...)
	var d loader.Doris = e.client
	if e.doris != nil {
		d = e.doris
	}
	l, err := loader.New(d, cfg)
	if err != nil {
		cfg.Store.Close()
		e.t.Fatal(err)
	}
	return l
}

// row is the JSON row of source record i.
func row(i int) []byte { return []byte(fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i, i)) }

// pos is the position after record i-1 (the next record to read is i).
func pos(i int) json.RawMessage { return json.RawMessage(`{"next":` + strconv.Itoa(i) + `}`) }

// next parses a position; nil is 0.
func next(t *testing.T, p json.RawMessage) int {
	t.Helper()
	if len(p) == 0 {
		return 0
	}
	var v struct{ Next int }
	if err := json.Unmarshal(p, &v); err != nil {
		t.Fatalf("position %s: %v", p, err)
	}
	return v.Next
}

// drive writes records [from, n) with a checkpoint every `every` records
// (and at n), then returns nil, or the first error.
func drive(ctx context.Context, l *loader.Loader, from, n, every int) error {
	return driveWith(ctx, l, from, n, every, row)
}

// driveWith is drive with a row function.
func driveWith(ctx context.Context, l *loader.Loader, from, n, every int, rowOf func(int) []byte) error {
	for i := from; i < n; i++ {
		if err := l.Write(ctx, rowOf(i)); err != nil {
			return err
		}
		if (i+1)%every == 0 || i+1 == n {
			if err := l.Checkpoint(ctx, pos(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRows writes records [from, to) without a checkpoint: the
// checkpoint stays open.
func writeRows(t *testing.T, ctx context.Context, l *loader.Loader, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := l.Write(ctx, row(i)); err != nil {
			t.Fatalf("write record %d: %v", i, err)
		}
	}
}

// finish drives records [from, n) on l, closes it and checks the table
// holds [0, n) exactly once.
func (e *env) finish(ctx context.Context, l *loader.Loader, from, n, every int) {
	e.t.Helper()
	if err := drive(ctx, l, from, n, every); err != nil {
		e.t.Fatalf("drive [%d, %d): %v", from, n, err)
	}
	if err := l.Close(ctx); err != nil {
		e.t.Fatalf("close: %v", err)
	}
	e.checkExactlyOnce(n)
}

// recoverTo recovers l and checks the position it returns.
func recoverTo(t *testing.T, ctx context.Context, l *loader.Loader, want int) {
	t.Helper()
	p, err := l.Recover(ctx)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	if got := next(t, p); got != want {
		t.Fatalf("recover returned position %d, want %d", got, want)
	}
}

// fault installs an emulator fault.
func (e *env) fault(f doristest.Fault) *doristest.FaultHandle {
	e.t.Helper()
	h, err := e.srv.Fault(f)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// crashAt returns failpoints crashing at fp after skip passes.
func crashAt(t *testing.T, fp string, skip int) *loader.Failpoints {
	t.Helper()
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(fp, loader.Crash().Skip(skip)); err != nil {
		t.Fatal(err)
	}
	return fps
}

// recoverActions records the recovery actions taken per label
// ("STATE:action", TestingKnobs.AfterRecoverLabel).
type recoverActions struct {
	mu  sync.Mutex
	got []string
}

func (r *recoverActions) knobs(c *loader.Config) {
	c.Knobs = &loader.TestingKnobs{AfterRecoverLabel: func(lbl string, st doris.TxnStatus, action string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, string(st)+":"+action)
	}}
}

func (r *recoverActions) has(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.got, want)
}

// runToEnd opens loaders on e until records [0, n) are loaded: Recover,
// drive, Close; after an ErrNeedRecover it recovers the same loader. It
// fails the test after too many rounds. With ExactlyOnce it checks after
// every Recover that no txn is left PREPARE or PRECOMMITTED (docs/design.md §2
// invariant 4: every label is final before a record is read).
func (e *env) runToEnd(ctx context.Context, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	var probe loader.Config
	for _, m := range mut {
		m(&probe)
	}
	l := e.open(mut...)
	defer l.Close(ctx)
	for round := 0; ; round++ {
		if round > 20 {
			e.t.Fatal("no progress after 20 recoveries")
		}
		p, err := l.Recover(ctx)
		if err != nil {
			e.t.Fatalf("recover: %v", err)
		}
		if probe.Guarantee != loader.AtLeastOnce {
			e.checkNoRunningTxn()
		}
		err = drive(ctx, l, next(e.t, p), n, every)
		if err == nil {
			break
		}
		if !errors.Is(err, loader.ErrNeedRecover) {
			e.t.Fatalf("drive: %v", err)
		}
	}
	if err := l.Close(ctx); err != nil {
		e.t.Fatalf("close: %v", err)
	}
}

// checkExactlyOnce compares the table with records [0, n): each id once.
func (e *env) checkExactlyOnce(n int) {
	e.t.Helper()
	counts := e.counts()
	var missing, dups []int
	for i := 0; i < n; i++ {
		switch c := counts[int64(i)]; {
		case c == 0:
			missing = append(missing, i)
		case c > 1:
			dups = append(dups, i)
		}
		delete(counts, int64(i))
	}
	if len(missing) > 0 || len(dups) > 0 || len(counts) > 0 {
		e.t.Errorf("table %s: missing %v, duplicated %v, unexpected %v", e.table, missing, dups, counts)
	}
	e.checkNoRunningTxn()
}

// checkAtLeastOnce: each id at least once.
func (e *env) checkAtLeastOnce(n int) (duplicates int) {
	e.t.Helper()
	counts := e.counts()
	for i := 0; i < n; i++ {
		c := counts[int64(i)]
		if c == 0 {
			e.t.Errorf("record %d missing", i)
		}
		duplicates += max(c-1, 0)
	}
	return duplicates
}

func (e *env) counts() map[int64]int {
	e.t.Helper()
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	counts := map[int64]int{}
	for _, r := range rows {
		id, ok := r[0].(int64)
		if !ok {
			e.t.Fatalf("row %v: id is %T", r, r[0])
		}
		counts[id]++
	}
	return counts
}

// checkNoRunningTxn: no PREPARE or PRECOMMITTED txn lingers.
func (e *env) checkNoRunningTxn() {
	e.t.Helper()
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, tx := range txns {
		if tx.Status == doris.TxnPrepare || tx.Status == doris.TxnPrecommitted {
			e.t.Errorf("txn %d label %s lingers in %s", tx.ID, tx.Label, tx.Status)
		}
	}
}

func testSeed(t *testing.T) int64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("LOADER_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("LOADER_SEED %q: %v", s, err)
		}
		return v
	}
	return time.Now().UnixNano()
}

// restarts opens a loader on e, recovers it to position want and closes
// it, times times: what repeated process restarts do to the store and
// ledger.
func (e *env) restarts(ctx context.Context, times, want int, mut ...func(*loader.Config)) {
	e.t.Helper()
	for range times {
		l := e.open(mut...)
		recoverTo(e.t, ctx, l, want)
		if err := l.Close(ctx); err != nil {
			e.t.Fatalf("close after recover: %v", err)
		}
	}
}
