package run

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// TestCrashHookExitsAtCutPoint: with a crash failpoint armed from the
// environment, run's hook exits 137 at the cut point itself (here the first
// Write's after-announce), before the loader returns ErrCrashed.
func TestCrashHookExitsAtCutPoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable("db", "CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root", MaxRetries: -1,
		RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	fp, err := failpointsFromEnv(func() []string { return []string{FailpointsEnv + "=" + loader.FailAfterAnnounce + "=crash"} })
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var codes []int
	var wrote bool // set once Write returned: the exit must come before
	fp.OnCrash(crashExit(slog.New(slog.NewTextHandler(&logs, nil)), func(code int) {
		if wrote {
			t.Error("exit after Write returned, want at the cut point")
		}
		codes = append(codes, code)
	}))

	dir := t.TempDir()
	st, err := checkpoint.OpenFile(dir, checkpoint.Owner{Job: "j", DB: "db", Table: "t", Writer: "0"})
	if err != nil {
		t.Fatal(err)
	}
	ld, err := loader.New(client, loader.Config{Job: "j", DB: "db", Table: "t", Store: st, LedgerDir: dir, Failpoints: fp})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	defer ld.Close(ctx)
	if _, err := ld.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	err = ld.Write(ctx, []byte(`{"id":1}`))
	wrote = true
	if !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("Write: %v, want ErrCrashed", err)
	}
	if len(codes) != 1 || codes[0] != ExitCrashed {
		t.Fatalf("exit codes %v, want [%d]", codes, ExitCrashed)
	}
	if !strings.Contains(logs.String(), "failpoint="+loader.FailAfterAnnounce) {
		t.Errorf("crash log does not name the failpoint:\n%s", logs.String())
	}
}
