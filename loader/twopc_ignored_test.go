package loader_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// dropTwoPC is a proxy that drops the two_phase_commit header (nginx drops
// headers with underscores by default) from the Stream Loads after the
// first `pass`: Doris then commits instead of precommitting, and the client
// reports doris.ErrTwoPhaseCommitIgnored with the result.
type dropTwoPC struct {
	loader.Doris
	pass  int32
	loads atomic.Int32
}

func (d *dropTwoPC) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if d.loads.Add(1) <= d.pass || !req.TwoPhaseCommit {
		return d.Doris.StreamLoad(ctx, req, body)
	}
	req.TwoPhaseCommit = false
	res, err := d.Doris.StreamLoad(ctx, req, body)
	if err != nil {
		return res, err
	}
	return nil, &doris.LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: res.TxnID,
		Status: res.Status, Message: res.Message, Result: res}
}

// A load that Doris committed although it was sent to be precommitted
// cannot be aborted, and replaying it would load its rows twice: the loader
// records it as decided and committed, stops with an error naming the
// proxy problem, and a restart (header fixed) resumes after it: every row
// once.
func TestTwoPhaseCommitIgnoredIsRecordedThenStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.doris = &dropTwoPC{Doris: e.client, pass: 1}
	l := e.open()
	recoverTo(t, ctx, l, 0)
	err := drive(ctx, l, 0, 30, 10)
	if !errors.Is(err, doris.ErrTwoPhaseCommitIgnored) || errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("drive: %v; want ErrTwoPhaseCommitIgnored, not ErrNeedRecover", err)
	}
	if werr := l.Write(ctx, row(20)); !errors.Is(werr, doris.ErrTwoPhaseCommitIgnored) {
		t.Fatalf("write after the stop: %v, want the same error", werr)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	e.doris = nil // the proxy is fixed
	l = e.open()
	recoverTo(t, ctx, l, 20)
	e.finish(ctx, l, 20, 30, 10)
}
