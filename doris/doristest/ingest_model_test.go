package doristest

// The BE ingest model (ingest_model.go), checked by counting clock steps and
// slot states, never by wall-clock timing.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// A 4 MiB body at 1 MiB/s needs exactly four 1 s Advance steps of the
// server's ManualClock: after three the load is throttled again (a sleeper
// reappears), after the fourth it answers Success.
func TestIngest_LoadThroughputOnManualClock(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk), WithLoadThroughput(mib))
	var b strings.Builder
	row := strings.Repeat("x", 1023) // with "1\t" and "\n": 1026 bytes a row
	for b.Len() < 4*mib {
		b.WriteString("1\t" + row + "\n")
	}
	body := b.String()[:4*mib-1] + "\n" // exactly 4 MiB, last row cut short
	done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "slow", "max_filter_ratio": "1"}, body)
	ctx := context.Background()
	steps := 0
	for {
		sleeping := make(chan error, 1)
		wctx, cancel := context.WithCancel(ctx)
		go func() { sleeping <- clk.WaitSleepers(wctx, 1) }()
		select {
		case res := <-done:
			cancel()
			if res == nil {
				t.Fatal("load failed at transport level")
			}
			wantEq(t, "Status", res["Status"], any("Success"))
			wantEq(t, "clock steps of 1 s", steps, 4)
			wantEq(t, "clock", clk.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 4*time.Second)
			return
		case err := <-sleeping:
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if steps == 4 {
				t.Fatal("still throttled after 4 s of clock for 4 MiB at 1 MiB/s")
			}
			clk.Advance(time.Second)
			steps++
		}
	}
}

// The limiter's accounting: n bytes are due at start + n/bps.
func TestIngest_ThrottleDue(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tb := &throttledBody{bps: 100 * 1000 * 1000, start: start} // 100 MB/s
	wantEq(t, "1 GB", tb.due(1000*1000*1000).Sub(start), 10*time.Second)
	wantEq(t, "1 byte", tb.due(1).Sub(start), 10*time.Nanosecond)
	tb = &throttledBody{bps: 3, start: start}
	wantEq(t, "1 of 3/s", tb.due(1).Sub(start), time.Second/3)
	wantEq(t, "7 of 3/s", tb.due(7).Sub(start), 2*time.Second+time.Second/3)
}

// WithBEConcurrentLoads(1): while one load holds BE 0's slot the next one
// waits (no txn begun, body unread) and proceeds once the first finishes;
// BE 1 has its own slot.
func TestIngest_ConcurrentLoadLimitWaits(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(2), WithBEConcurrentLoads(1))
	ctx := context.Background()
	h, err := s.Fault(Fault{Op: FaultStream, Label: "a", Block: true})
	if err != nil {
		t.Fatal(err)
	}
	urls := s.BEURLs()
	a := putAsync(urls[0]+"/api/demo/orders/_stream_load", hdr{"label": "a"}, "1\ta\n")
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := putAsync(urls[0]+"/api/demo/orders/_stream_load", hdr{"label": "b"}, "2\tb\n")
	if err := s.waitBackends(ctx, 0, func(r, w int) bool { return r == 1 && w == 1 }); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "b waits before begin", s.LabelState(testDB, "b"), doris.TxnUnknown)
	info := s.Backends()[0]
	wantEq(t, "running", info.LoadsRunning, 1)
	wantEq(t, "waiting", info.LoadsWaiting, 1)

	// BE 1 is not saturated: a load there finishes while BE 0 is full.
	_, raw := do(t, "PUT", urls[1]+"/api/demo/orders/_stream_load", hdr{"label": "c"}, "3\tc\n")
	wantEq(t, "c on BE 1", decode(t, raw)["Status"], any("Success"))
	wantEq(t, "BE 0 still full", s.Backends()[0].LoadsWaiting, 1)

	h.Release()
	ra, rb := <-a, <-b
	if ra == nil || rb == nil {
		t.Fatalf("a %v b %v", ra, rb)
	}
	wantEq(t, "a", ra["Status"], any("Success"))
	wantEq(t, "b", rb["Status"], any("Success"))
	if err := s.waitBackends(ctx, 0, func(r, w int) bool { return r == 0 && w == 0 }); err != nil {
		t.Fatal(err)
	}
}

// Limit 2: two loads run at once, neither waits.
func TestIngest_ConcurrentLoadLimitTwo(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBEConcurrentLoads(2))
	ctx := context.Background()
	h, err := s.Fault(Fault{Op: FaultStream, Block: true, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "a"}, "1\ta\n")
	b := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "b"}, "2\tb\n")
	if err := h.Wait(ctx, 2); err != nil {
		t.Fatal(err)
	}
	info := s.Backends()[0]
	wantEq(t, "running", info.LoadsRunning, 2)
	wantEq(t, "waiting", info.LoadsWaiting, 0)
	h.Release()
	<-a
	<-b
}

// 2PC commit/abort and the error log are never limited.
func TestIngest_LimitOnlyStreamLoad(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBEConcurrentLoads(1))
	id := precommit(t, s, "p", "1\ta\n")
	h, err := s.Fault(Fault{Op: FaultStream, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	a := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "a"}, "2\tb\n")
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	_, raw := do(t, "PUT", s.BEURL()+"/api/demo/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	wantEq(t, "commit while full", decode(t, raw)["status"], any("Success"))
	h.Release()
	<-a
}

func TestIngest_Options(t *testing.T) {
	t.Parallel()
	if _, err := NewServer(WithLoadThroughput(-1)); err == nil {
		t.Error("negative throughput accepted")
	}
	if _, err := NewServer(WithBEConcurrentLoads(-1)); err == nil {
		t.Error("negative concurrent loads accepted")
	}
	if !isStreamLoadPath("/api/db/t/_stream_load") || isStreamLoadPath("/api/db/_stream_load_2pc") || isStreamLoadPath("/api/db/t/_stream_load_2pc") {
		t.Error("isStreamLoadPath")
	}
}
