package doris_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

const emuDB = "demo"

// newEmulated starts doristest with demo.orders (Duplicate Key, JSON-loadable)
// and a client on it (FE "localhost", BE "127.0.0.1": the 307 is cross-host).
func newEmulated(t *testing.T, opts ...doristest.Opt) (*doristest.Server, *doris.Client) {
	t.Helper()
	s, err := doristest.NewServer(append([]doristest.Opt{doristest.SeedDatabases(emuDB), doristest.User("loader", "pw-emu")}, opts...)...)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(s.Close)
	ddl := "CREATE TABLE orders (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\")"
	if err := s.CreateTable(emuDB, ddl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, MySQL: s.MySQLAddr(), User: "loader", Password: "pw-emu", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

func jsonLoad(label string) doris.LoadRequest {
	return doris.LoadRequest{DB: emuDB, Table: "orders", Label: label, Format: "json", ReadJSONByLine: true, TwoPhaseCommit: true}
}

const twoRows = "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}\n"

// §3, §5: precommit → PRECOMMITTED → commit → COMMITTED/VISIBLE; commit again
// → ErrTxnAlreadyCommitted; the label is then taken (§2.3 FINISHED).
func TestEmulatorTwoPCCommit(t *testing.T) {
	t.Parallel()
	s, c := newEmulated(t)
	ctx := context.Background()
	res, err := c.StreamLoad(ctx, jsonLoad("emu:1"), strings.NewReader(twoRows))
	if err != nil {
		t.Fatalf("StreamLoad: %v", err)
	}
	if res.TwoPhaseCommit != "true" || res.NumberLoadedRows != 2 || res.TxnID <= 0 {
		t.Fatalf("result %+v", res)
	}
	if st, err := c.LoadState(ctx, emuDB, "emu:1"); err != nil || st != doris.TxnPrecommitted {
		t.Fatalf("LoadState = %q, %v", st, err)
	}
	if err := c.CommitTxn(ctx, emuDB, res.TxnID); err != nil {
		t.Fatalf("CommitTxn: %v", err)
	}
	if err := c.CommitTxn(ctx, emuDB, res.TxnID); !errors.Is(err, doris.ErrTxnAlreadyCommitted) {
		t.Fatalf("second commit: %v", err)
	}
	if st := s.LabelState(emuDB, "emu:1"); st != doris.TxnVisible && st != doris.TxnCommitted {
		t.Fatalf("emulator state %q", st)
	}
	_, err = c.StreamLoad(ctx, jsonLoad("emu:1"), strings.NewReader(twoRows))
	var le *doris.LoadError
	if !errors.Is(err, doris.ErrLabelAlreadyExists) || !errors.As(err, &le) {
		t.Fatalf("reuse: %v", err)
	}
	if le.Result.ExistingJobStatus != doris.JobFinished || le.Result.ExistingTxnID != res.TxnID {
		t.Fatalf("Label Already Exists result %+v", le.Result)
	}
}

// §2.3 PRECOMMITTED, §3.3 abort rules, §4 label reusable after abort.
func TestEmulatorAbortAndReuse(t *testing.T) {
	t.Parallel()
	_, c := newEmulated(t)
	ctx := context.Background()
	res, err := c.StreamLoad(ctx, jsonLoad("emu:2"), strings.NewReader(twoRows))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StreamLoad(ctx, jsonLoad("emu:2"), strings.NewReader(twoRows))
	var le *doris.LoadError
	if !errors.As(err, &le) || le.Result.ExistingJobStatus != doris.JobPrecommitted || le.Result.ExistingTxnID != res.TxnID {
		t.Fatalf("label in flight: %v", err)
	}
	if err := c.AbortLabel(ctx, emuDB, "emu:2"); err != nil {
		t.Fatalf("AbortLabel: %v", err)
	}
	err = c.AbortTxn(ctx, emuDB, res.TxnID)
	var te *doris.TxnError
	if !errors.Is(err, doris.ErrTxnAlreadyAborted) || !errors.As(err, &te) || te.Reason != "User Abort" {
		t.Fatalf("second abort: %v", err)
	}
	if err := c.CommitTxn(ctx, emuDB, res.TxnID); !errors.Is(err, doris.ErrTxnAlreadyAborted) {
		t.Fatalf("commit aborted: %v", err)
	}
	if err := c.CommitLabel(ctx, emuDB, "emu:2"); !errors.Is(err, doris.ErrRunningTxnNotFound) {
		t.Fatalf("commit label of aborted: %v", err)
	}
	if err := c.CommitLabel(ctx, emuDB, "never-used"); !errors.Is(err, doris.ErrTxnNotFound) {
		t.Fatalf("commit unknown label: %v", err)
	}
	if _, err := c.StreamLoad(ctx, jsonLoad("emu:2"), strings.NewReader(twoRows)); err != nil {
		t.Fatalf("reuse after abort: %v", err)
	}
}

// §8: a bad row with max_filter_ratio 0 → ErrDataQuality.
func TestEmulatorDataQuality(t *testing.T) {
	t.Parallel()
	_, c := newEmulated(t)
	_, err := c.StreamLoad(context.Background(), jsonLoad("emu:3"), strings.NewReader("{\"id\":1,\"v\":\"a\"}\n{not json\n"))
	if !errors.Is(err, doris.ErrDataQuality) || doris.IsAmbiguous(err) {
		t.Fatalf("err = %v", err)
	}
}

// §1.2/§1.3: wrong password → ErrUnauthorized, password not in the error.
func TestEmulatorUnauthorized(t *testing.T) {
	t.Parallel()
	s, _ := newEmulated(t)
	c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, User: "loader", Password: "wrong-pw-777"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.StreamLoad(context.Background(), jsonLoad("emu:4"), strings.NewReader(twoRows))
	if !errors.Is(err, doris.ErrUnauthorized) || strings.Contains(err.Error(), "wrong-pw-777") {
		t.Fatalf("err = %v", err)
	}
}

// Precommit applied, answer dropped: ambiguous; the label says PRECOMMITTED.
func TestEmulatorApplyThenDropIsAmbiguous(t *testing.T) {
	t.Parallel()
	s, c := newEmulated(t)
	if _, err := s.Fault(doristest.Fault{Op: doristest.FaultPrecommit, ApplyThenDrop: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err := c.StreamLoad(ctx, jsonLoad("emu:5"), strings.NewReader(twoRows))
	if !doris.IsAmbiguous(err) {
		t.Fatalf("err = %v, want ambiguous", err)
	}
	if st, err := c.LoadState(ctx, emuDB, "emu:5"); err != nil || st != doris.TxnPrecommitted {
		t.Fatalf("LoadState = %q, %v", st, err)
	}
}

// BE down: the FE redirects to a refusing BE; nothing sent, not ambiguous.
func TestEmulatorBEDownNotAmbiguous(t *testing.T) {
	t.Parallel()
	s, c := newEmulated(t)
	s.BEDown()
	_, err := c.StreamLoad(context.Background(), jsonLoad("emu:6"), strings.NewReader(twoRows))
	if err == nil || doris.IsAmbiguous(err) {
		t.Fatalf("err = %v, want non-ambiguous", err)
	}
}

// §6.2 over MySQL: SHOW TRANSACTION by label and id; SHOW CREATE TABLE.
func TestEmulatorMySQL(t *testing.T) {
	t.Parallel()
	s, c := newEmulated(t)
	if s.MySQLAddr() == "" {
		t.Fatal("emulator has no MySQL front")
	}
	ctx := context.Background()
	res, err := c.StreamLoad(ctx, jsonLoad("emu:7"), strings.NewReader(twoRows))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.TransactionByLabel(ctx, emuDB, "emu:7")
	if err != nil {
		t.Fatalf("TransactionByLabel: %v", err)
	}
	if tx.ID != res.TxnID || tx.Status != doris.TxnPrecommitted || tx.Label != "emu:7" || tx.PrepareTime.IsZero() || !tx.CommitTime.IsZero() {
		t.Fatalf("transaction %+v", tx)
	}
	if tx2, err := c.TransactionByID(ctx, emuDB, res.TxnID); err != nil || tx2.Label != "emu:7" {
		t.Fatalf("TransactionByID: %+v, %v", tx2, err)
	}
	if _, err := c.TransactionByLabel(ctx, emuDB, "nope"); !errors.Is(err, doris.ErrTxnNotFound) {
		t.Fatalf("unknown label: %v", err)
	}
	tbl, err := c.ShowCreateTable(ctx, emuDB, "orders")
	if err != nil {
		t.Fatalf("ShowCreateTable: %v", err)
	}
	if tbl.Name != "orders" || len(tbl.Columns) != 2 || tbl.Keys != "DUPLICATE" {
		t.Fatalf("table %+v", tbl)
	}
	cfg, err := c.FrontendConfig(ctx, "stream_load_default_precommit_timeout_second")
	if err != nil || cfg["stream_load_default_precommit_timeout_second"] != "3600" {
		t.Fatalf("FrontendConfig = %v, %v", cfg, err)
	}
}

// Compressed loads through the emulator, which decodes compress_type as the
// BE does (be/src/util/load_util.cpp, be/src/exec/decompressor.cpp;
// docs/emulator.md "Load body"): gz and lz4, CSV and JSON (JSON
// compression needs a BE whose stream_load.cpp no longer refuses it), 2PC.
// Every row lands, and LoadBytes (the BE's receive_bytes) is the smaller
// compressed size.
func TestEmulatorCompressedLoads(t *testing.T) {
	t.Parallel()
	const rows = 5000
	var jsonBody, csvBody strings.Builder
	for i := range rows {
		fmt.Fprintf(&jsonBody, "{\"id\":%d,\"v\":\"value-%d\"}\n", i, i%97)
		fmt.Fprintf(&csvBody, "%d,value-%d\n", i, i%97)
	}
	for _, comp := range []doris.Compression{doris.CompressGzip, doris.CompressLZ4} {
		for _, format := range []string{"json", "csv"} {
			t.Run(string(comp)+"-"+format, func(t *testing.T) {
				t.Parallel()
				s, c := newEmulated(t)
				ctx := context.Background()
				req := jsonLoad("emu:z")
				body := jsonBody.String()
				if format == "csv" {
					req.Format, req.ReadJSONByLine, req.ColumnSeparator = "csv", false, ","
					body = csvBody.String()
				}
				req.Compression = comp
				res, err := c.StreamLoad(ctx, req, strings.NewReader(body))
				if err != nil {
					t.Fatalf("StreamLoad: %v", err)
				}
				if res.NumberLoadedRows != rows || res.LoadBytes <= 0 || res.LoadBytes >= int64(len(body))*3/4 {
					t.Fatalf("loaded %d rows, LoadBytes %d for a %d-byte body", res.NumberLoadedRows, res.LoadBytes, len(body))
				}
				if err := c.CommitTxn(ctx, emuDB, res.TxnID); err != nil {
					t.Fatal(err)
				}
				got, err := s.Rows(emuDB, "orders")
				if err != nil || len(got) != rows {
					t.Fatalf("table has %d rows (%v), want %d", len(got), err, rows)
				}
			})
		}
	}
}
