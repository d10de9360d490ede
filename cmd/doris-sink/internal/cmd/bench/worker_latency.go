package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// visibility joins what the loader and the connector report: for each
// checkpoint id, the source range it covers and when it became visible
// (exactly-once: its commit was recorded, AfterCommit; at-least-once: its
// load returned, which is when Doris publishes a non-2PC load).
type visibility struct {
	mu      sync.Mutex
	eo      bool
	lastID  uint64 // the id precommitted by the Checkpoint in progress
	ranges  map[uint64][2]kafka.Position
	visible map[uint64]time.Time
	failed  error
}

func newVisibility(eo bool) *visibility {
	return &visibility{eo: eo, ranges: map[uint64][2]kafka.Position{}, visible: map[uint64]time.Time{}}
}

func (v *visibility) knobs() *loader.TestingKnobs {
	return &loader.TestingKnobs{
		AfterPrecommit: func(id uint64, _ *doris.LoadResult) {
			now := time.Now()
			v.mu.Lock()
			defer v.mu.Unlock()
			v.lastID = id
			if !v.eo {
				v.visible[id] = now
			}
		},
		AfterCommit: func(id uint64, err error) {
			now := time.Now()
			v.mu.Lock()
			defer v.mu.Unlock()
			if err != nil {
				v.failed = fmt.Errorf("commit of checkpoint %d: %w", id, err)
				return
			}
			v.visible[id] = now
		},
	}
}

// onCheckpoint runs on the Run goroutine right after the Checkpoint call
// whose AfterPrecommit set lastID.
func (v *visibility) onCheckpoint(st kafka.CheckpointStats) {
	if st.Err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ranges[v.lastID] = [2]kafka.Position{st.Start, st.End}
}

// producedAt records produce timestamps per partition and offset (the
// topic is fresh: offsets start at 0).
type producedAt struct {
	mu sync.Mutex
	ts map[int32][]int64
}

func (p *producedAt) add(r *kgo.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.ts[r.Partition]
	for int64(len(s)) <= r.Offset {
		s = append(s, 0)
	}
	s[r.Offset] = r.Timestamp.UnixNano()
	p.ts[r.Partition] = s
}

// runLatency produces s.Rate records/s for s.Duration into a fresh topic
// while the sink loads it, then drains and reports visible − produced
// over every record (p50, p99, max).
func runLatency(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	client, err := newDoris(s)
	if err != nil {
		return res, err
	}
	defer client.Close()
	vis := newVisibility(s.Mode != loader.AtLeastOnce.String())
	ld, err := newLoader(client, s, vis.knobs())
	if err != nil {
		return res, err
	}
	var (
		conn    *kafka.Connector
		endMu   sync.Mutex
		end     map[int32]int64 // set when producing is over
		drained bool
	)
	conn, err = newConnector(s, ld, kafka.WithOnCheckpoint(vis.onCheckpoint),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(pos kafka.Position) {
			endMu.Lock()
			defer endMu.Unlock()
			if end == nil || drained {
				return
			}
			for p, e := range end {
				if pos.Offsets[p] < e {
					return
				}
			}
			drained = true
			conn.Drain()
		}}))
	if err != nil {
		ld.Close(ctx)
		return res, err
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Brokers...), kgo.DefaultProduceTopic(s.Topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		return res, fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()

	m, err := startMeter(s.CPUProfile)
	if err != nil {
		return res, err
	}
	if err := m.watch(nil); err != nil {
		return res, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- conn.Run(ctx) }()

	at := &producedAt{ts: map[int32][]int64{}}
	gen := newRowGen(s.Format, s.RecordBytes, 7)
	var perr error
	var pmu sync.Mutex
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	start := time.Now()
	var n int64
	for time.Since(start) < s.Duration {
		select {
		case <-t.C:
		case err := <-runErr:
			t.Stop()
			return res, fmt.Errorf("sink stopped while producing: %v", err)
		}
		want := int64(time.Since(start).Seconds() * float64(s.Rate))
		for ; n < want; n++ {
			prod.Produce(ctx, &kgo.Record{Value: gen.appendRow(nil, n)}, func(r *kgo.Record, err error) {
				if err != nil {
					pmu.Lock()
					perr = err
					pmu.Unlock()
					return
				}
				at.add(r)
			})
		}
	}
	t.Stop()
	if err := prod.Flush(ctx); err != nil {
		return res, fmt.Errorf("producer flush: %w", err)
	}
	if perr != nil {
		return res, fmt.Errorf("produce: %w", perr)
	}
	at.mu.Lock()
	e := map[int32]int64{}
	for p, ts := range at.ts {
		e[p] = int64(len(ts))
	}
	at.mu.Unlock()
	endMu.Lock()
	end = e
	endMu.Unlock()
	// The sink may have consumed everything already and be idle in a poll:
	// it returns from it at the next interval tick and sees the end then.
	if err := <-runErr; err != nil {
		return res, err
	}
	if err := m.stop(&res); err != nil {
		return res, err
	}
	if vis.failed != nil {
		return res, vis.failed
	}
	lat, err := vis.latencies(at)
	if err != nil {
		return res, err
	}
	res.Records, res.Samples, res.Checkpts = n, len(lat), len(vis.ranges)
	res.LatencyMS = []float64{percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 1)}
	return res, nil
}

// latencies returns visible − produced in milliseconds for every record
// covered by a visible checkpoint; a produced record never covered is an
// error.
func (v *visibility) latencies(at *producedAt) ([]float64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []float64
	for id, r := range v.ranges {
		vt, ok := v.visible[id]
		if !ok {
			return nil, fmt.Errorf("checkpoint %d decided but never visible", id)
		}
		for p, endOff := range r[1].Offsets {
			ts := at.ts[p]
			for o := r[0].Offsets[p]; o < endOff && o < int64(len(ts)); o++ {
				out = append(out, float64(vt.UnixNano()-ts[o])/1e6)
			}
		}
	}
	total := 0
	for _, ts := range at.ts {
		total += len(ts)
	}
	if len(out) != total {
		return nil, fmt.Errorf("%d records produced, %d covered by visible checkpoints", total, len(out))
	}
	slices.Sort(out)
	return out, nil
}

// percentile returns the q quantile of sorted xs (nearest rank).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs)) + 0.5)
	return xs[min(max(i-1, 0), len(xs)-1)]
}
