package loader_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

var seedFlag = flag.Int64("loader.seed", 0, "seed of TestRandomCrashes (0: from LOADER_SEED or time)")

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
	return &env{t: t, srv: srv, client: client, dir: t.TempDir(), table: "events", job: "test-job"}
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
	return cfg
}

func (e *env) open(mut ...func(*loader.Config)) *loader.Loader {
	e.t.Helper()
	cfg := e.config(mut...)
	l, err := loader.New(e.client, cfg)
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
	for i := from; i < n; i++ {
		if err := l.Write(ctx, row(i)); err != nil {
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

// runToEnd opens loaders on e until records [0, n) are loaded: Recover,
// drive, Close; after an ErrNeedRecover it recovers the same loader. It
// fails the test after too many rounds.
func (e *env) runToEnd(ctx context.Context, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
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

func ioPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }
