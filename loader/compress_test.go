package loader_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// compressWatch records the Compression and the raw compress_type header of
// every Stream Load that carries a body.
type compressWatch struct {
	loader.Doris
	mu    sync.Mutex
	comps []doris.Compression
	raw   []string
}

func (w *compressWatch) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if body != nil {
		w.mu.Lock()
		w.comps = append(w.comps, req.Compression)
		for k, v := range req.Headers {
			if strings.EqualFold(k, "compress_type") {
				w.raw = append(w.raw, v)
			}
		}
		w.mu.Unlock()
	}
	return w.Doris.StreamLoad(ctx, req, body)
}

// check fails unless every load with a body asked the client to compress
// with want, and none passed compress_type through raw.
func (w *compressWatch) check(t *testing.T, want doris.Compression) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.comps) == 0 || len(w.raw) > 0 {
		t.Fatalf("%d loads, raw compress_type headers %q", len(w.comps), w.raw)
	}
	for i, c := range w.comps {
		if c != want {
			t.Fatalf("load %d: Compression %q, want %q", i, c, want)
		}
	}
}

// With doris.properties.compress_type gz or lz4 (any case) the sink
// compresses the body (the emulator decodes it as the BE does, so a wrong
// header or an uncompressed body fails the load), at every crash point:
// crash there, reopen, recover, finish, and every row is in the table
// exactly once. A 64-byte buffer hands the compressor many pieces per
// checkpoint, so a crash mid-stream cuts a compressed stream.
func TestCompressedCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 40, 6
	for _, prop := range []string{"gz", "LZ4"} {
		want, err := doris.ParseCompression(prop)
		if err != nil {
			t.Fatal(err)
		}
		for _, fp := range loader.AllFailpoints {
			t.Run(prop+"/"+fp, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e := newEnv(t)
				e.compress = prop
				w := &compressWatch{Doris: e.client}
				e.doris = w
				small := func(c *loader.Config) { c.BufferSize = 64 }
				skip := 1 // a crash after compressed checkpoints committed
				if fp == loader.FailBeforeAnnounce {
					skip = 0 // fires once per Recover
				}
				e.crashRun(ctx, crashAt(t, fp, skip), n, every, small)
				e.runToEnd(ctx, n, every, small)
				e.checkExactlyOnce(n)
				w.check(t, want)
			})
		}
	}
}

// A compress_type the sink cannot produce is refused when the loader is
// made, naming the allowed values, as is compress_type set twice in two
// cases; a Participant refuses a bad value at Begin.
func TestCompressTypeRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, v := range []string{"zstd", "bz2", "gzip"} {
		cfg := e.config(func(c *loader.Config) { c.Properties = map[string]string{"Compress_Type": v} })
		l, err := loader.New(e.client, cfg)
		if err == nil {
			l.Close(context.Background())
			t.Fatalf("compress_type %q accepted", v)
		}
		cfg.Store.Close()
		if !strings.Contains(err.Error(), "Compress_Type") || !strings.Contains(err.Error(), doris.CompressionNames) {
			t.Errorf("compress_type %q: %v", v, err)
		}
	}
	cfg := e.config(func(c *loader.Config) {
		c.Properties = map[string]string{"compress_type": "gz", "COMPRESS_TYPE": "lz4"}
	})
	if l, err := loader.New(e.client, cfg); err == nil {
		l.Close(context.Background())
		t.Fatal("compress_type set twice (two cases) accepted")
	}
	cfg.Store.Close()
	p := newParticipant(t, e)
	_, err := p.Begin(context.Background(), "app:events:0:1",
		loader.Target{DB: testDB, Table: e.table, Format: "json", Properties: map[string]string{"compress_type": "zstd"}})
	if err == nil || !strings.Contains(err.Error(), doris.CompressionNames) {
		t.Fatalf("Begin with zstd: %v", err)
	}
}

// A Participant's txn with compress_type lz4 streams a compressed body
// through many small writes and commits every row; an aborted compressed
// txn leaves nothing.
func TestParticipantCompressed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	p := newParticipant(t, e) // 64-byte buffer
	target := loader.Target{DB: testDB, Table: e.table, Format: "json", Properties: map[string]string{"compress_type": "lz4"}}
	aborted, err := p.Begin(ctx, "app:events:0:1", target)
	if err != nil {
		t.Fatal(err)
	}
	writeTxn(t, aborted, 100, 150)
	if err := aborted.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := p.Begin(ctx, "app:events:0:2", target)
	if err != nil {
		t.Fatal(err)
	}
	writeTxn(t, tx, 0, 500)
	c, err := tx.Precommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(500)
}

var errStopCompressed = errors.New("test: compressed load stopped")

// ctxEndedMidBody ends a compressed load's context while the body is
// streaming: the loader closes the pipe, the transport fails the request,
// and nothing stays behind (the caller checks goroutines).
func ctxEndedMidBody(t *testing.T, e *env) {
	ctx := context.Background()
	p := newParticipant(t, e)
	bctx, cancel := context.WithCancelCause(ctx)
	tx, err := p.Begin(bctx, "app:events:0:1", loader.Target{DB: testDB, Table: e.table, Format: "json",
		Properties: map[string]string{"compress_type": "gz"}})
	if err != nil {
		t.Fatal(err)
	}
	writeTxn(t, tx, 0, 2000)
	cancel(errStopCompressed)
	if _, err := tx.Precommit(ctx); err == nil {
		t.Fatal("precommit of a cancelled load succeeded")
	}
}
