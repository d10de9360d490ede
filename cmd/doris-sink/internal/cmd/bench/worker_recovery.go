package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// hookedSink wraps the Loader to observe Recover and the first Write
// (the first record read after the start).
type hookedSink struct {
	*loader.Loader
	onRecover func(start, end time.Time)
	onWrite   func()
}

func (h *hookedSink) Recover(ctx context.Context) (json.RawMessage, error) {
	start := time.Now()
	raw, err := h.Loader.Recover(ctx)
	if h.onRecover != nil {
		h.onRecover(start, time.Now())
	}
	return raw, err
}

func (h *hookedSink) Write(ctx context.Context, row []byte) error {
	h.onWrite()
	return h.Loader.Write(ctx, row)
}

// WriteKey is the connector's write (kafka.KeySink: the Loader has it, so
// the connector calls it, not Write): hooked too.
func (h *hookedSink) WriteKey(ctx context.Context, key uint64, row []byte) error {
	h.onWrite()
	return h.Loader.WriteKey(ctx, key, row)
}

// runVictim runs the sink until at least one checkpoint is committed and
// the next one is streaming, then prints {"event":"ready"} and blocks in
// Write (its Stream Load open) until the parent kills it (kill -9).
func runVictim(ctx context.Context, s spec, out *lineWriter) (workerResult, error) {
	var res workerResult
	client, err := newDoris(s)
	if err != nil {
		return res, err
	}
	defer client.Close()
	var committed, ready atomic.Bool
	ld, err := newLoader(client, s, &loader.TestingKnobs{AfterCommit: func(_ uint64, err error) {
		if err == nil {
			committed.Store(true)
		}
	}})
	if err != nil {
		return res, err
	}
	sink := &hookedSink{Loader: ld, onWrite: func() {
		if committed.Load() && !ready.Load() {
			ready.Store(true)
			_ = out.write(workerResult{Event: "ready"})
			// Stay mid-stream (a Stream Load open, this record unwritten)
			// until the parent's SIGKILL arrives.
			<-ctx.Done()
		}
	}}
	conn, err := newConnector(s, sink)
	if err != nil {
		ld.Close(ctx)
		return res, err
	}
	err = conn.Run(ctx)
	return res, errors.Join(errors.New("victim finished the topic before it was killed: seed more records"), err)
}

// runRecover restarts the sink on the victim's store and reports when
// Recover ran and when the first record was read; it then drains.
func runRecover(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	client, err := newDoris(s)
	if err != nil {
		return res, err
	}
	defer client.Close()
	var mu sync.Mutex
	ld, err := newLoader(client, s, &loader.TestingKnobs{AfterRecoverLabel: func(label string, st doris.TxnStatus, action string) {
		mu.Lock()
		defer mu.Unlock()
		res.LabelsChecked++
		res.Actions = append(res.Actions, fmt.Sprintf("%s:%s", st, action))
	}})
	if err != nil {
		return res, err
	}
	var conn *kafka.Connector
	var once sync.Once
	sink := &hookedSink{Loader: ld,
		onRecover: func(start, end time.Time) {
			mu.Lock()
			defer mu.Unlock()
			if res.RecoverStart == 0 {
				res.RecoverStart, res.RecoverEnd = start.UnixNano(), end.UnixNano()
			}
		},
		onWrite: func() {
			once.Do(func() {
				mu.Lock()
				res.FirstRead = time.Now().UnixNano()
				mu.Unlock()
				conn.Drain()
			})
		}}
	conn, err = newConnector(s, sink)
	if err != nil {
		ld.Close(ctx)
		return res, err
	}
	if err := conn.Run(ctx); err != nil {
		return res, err
	}
	mu.Lock()
	defer mu.Unlock()
	if res.FirstRead == 0 {
		return res, errors.New("no record read after the restart")
	}
	res.PeakRSSMB = peakRSS()
	return res, nil
}
