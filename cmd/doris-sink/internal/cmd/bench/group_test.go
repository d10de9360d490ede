package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// memberEnv, set to a config path, makes this test binary act as a group
// member (`doris-sink run -c <path>`); see runMemberIfAsked.
const memberEnv = "BENCH_TEST_MEMBER_CONFIG" // not DORIS_SINK_*: those are config keys

// runMemberIfAsked runs `doris-sink run` when this test binary was
// started as a member (memberEnv): it never returns then.
func runMemberIfAsked() {
	cfg := os.Getenv(memberEnv)
	if cfg == "" {
		return
	}
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Environ: os.Environ, Version: "test", Now: time.Now}
	cmd := run.NewCmdRun(f, nil)
	cmd.SetArgs([]string{"-c", cfg})
	cmd.SilenceUsage = true
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func testMember(config string) (string, []string, []string, error) {
	exe, err := os.Executable()
	return exe, []string{"-test.run=^$"}, []string{memberEnv + "=" + config}, err
}

// TestLongestGap: the longest time without a loading decision over a
// window counts the gap that straddles its start and the one that runs
// past its end, and ignores decisions that loaded nothing.
func TestLongestGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int, recs int64) decision {
		return decision{at: t0.Add(time.Duration(ms) * time.Millisecond), records: recs}
	}
	ds := []decision{at(0, 5), at(300, 5), at(400, 0), at(1500, 5), at(1700, 5), at(2600, 5)}
	cases := []struct {
		from, to int
		want     time.Duration
	}{
		{100, 1600, 1200 * time.Millisecond}, // 300 → 1500, the empty decision at 400 does not count
		{1600, 2000, 900 * time.Millisecond}, // 1700 → 2600 runs past the window's end
		{50, 250, 300 * time.Millisecond},    // 0 → 300 straddles the start
		{2700, 3000, 400 * time.Millisecond}, // nothing after 2600: until the window's end
	}
	for _, c := range cases {
		got := longestGap(ds, t0.Add(time.Duration(c.from)*time.Millisecond), t0.Add(time.Duration(c.to)*time.Millisecond))
		if got != c.want {
			t.Errorf("longestGap(%d..%d ms) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// TestLongestPartitionGap: per partition, only the decisions that
// advanced it count: a partition that moved waits longer than the group.
func TestLongestPartitionGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := func(ms int, parts ...int32) decision {
		x := decision{at: t0.Add(time.Duration(ms) * time.Millisecond), records: 1, start: map[int32]int64{}, end: map[int32]int64{}}
		for _, p := range parts {
			x.end[p] = 1
		}
		return x
	}
	// Partition 1 is loaded at 0 and 1000; partition 0 every 200 ms.
	ds := []decision{d(0, 0, 1), d(200, 0), d(400, 0), d(600, 0), d(800, 0), d(1000, 0, 1)}
	from, to := t0.Add(100*time.Millisecond), t0.Add(900*time.Millisecond)
	if got := longestGap(ds, from, to); got != 200*time.Millisecond {
		t.Errorf("group gap = %v, want 200ms", got)
	}
	if got := longestPartitionGap(ds, from, to); got != time.Second {
		t.Errorf("partition gap = %v, want 1s (partition 1)", got)
	}
}

// TestGroupLogParsesRunLines: the bench reads `doris-sink run`'s JSON
// "checkpoint decided" and "recovered; reading" lines; a decision's
// partitions are those its range advanced.
func TestGroupLogParsesRunLines(t *testing.T) {
	l := newGroupLog()
	l.add(2, []byte(`{"time":"2026-12-01T13:00:00.5Z","level":"INFO","msg":"recovered; reading","start":{"topic":"t","offsets":{"1":4,"5":0}}}`))
	l.add(2, []byte(`{"time":"2026-12-01T13:00:01Z","level":"INFO","msg":"checkpoint decided","start":{"topic":"t","offsets":{"1":4,"5":0}},`+
		`"end":{"topic":"t","offsets":{"1":9,"5":0}},"records":5}`))
	l.add(2, []byte(`not json`))
	ds := l.snapshot()
	if len(ds) != 1 || ds[0].member != 2 || ds[0].records != 5 {
		t.Fatalf("decisions = %+v", ds)
	}
	if ps := ds[0].partitions(); len(ps) != 1 || ps[0] != 1 {
		t.Errorf("partitions = %v, want [1]", ps)
	}
	if !l.decidedUpTo(map[int32]int64{1: 9, 5: 0}) || l.decidedUpTo(map[int32]int64{1: 10}) {
		t.Error("decidedUpTo disagrees with the decided end {1: 9}")
	}
	if got := l.ready[2]; !got.Equal(time.Date(2026, 12, 1, 13, 0, 0, 5e8, time.UTC)) {
		t.Errorf("ready = %v", got)
	}
}

// TestBenchGroupJSONShape runs the group cases on a few records with real
// member processes (this test binary as `doris-sink run`): every case
// reports its throughput per member, the pauses and (2+ members) the
// inherit time; Doris counted every produced record once (checked by the
// case). It asserts no timing.
func TestBenchGroupJSONShape(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		var cs []GroupCase
		for _, m := range []int{1, 2} {
			cs = append(cs, GroupCase{Members: m, Slots: 2, Partitions: 4, Records: 2000, Interval: 200 * time.Millisecond,
				SessionTimeout: 6 * time.Second, Rate: 500, Observe: 1500 * time.Millisecond})
		}
		o.Plan, o.Worker, o.Member = &Plan{Group: cs}, testWorker, testMember
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	var rs []Result
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var r Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output is not a stream of JSON objects: %v\n%s", err, out)
		}
		rs = append(rs, r)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d results, want 2:\n%s", len(rs), out)
	}
	for i, r := range rs {
		if r.Kind != KindGroup || r.Members != i+1 || len(r.MemberRecordsPerS) != r.Members || r.Records != 2000 || r.RecordsPerS <= 0 {
			t.Errorf("case %d: %+v", i, r)
		}
		if r.RebalancePauseJoinMS <= 0 || r.RebalancePauseLeaveMS <= 0 || r.SteadyGapMS <= 0 {
			t.Errorf("%s: pauses not measured: %+v", r.Case, r)
		}
		// One partition waits at least as long as the group as a whole.
		if r.PartitionPauseJoinMS < r.RebalancePauseJoinMS || r.PartitionPauseLeaveMS < r.RebalancePauseLeaveMS ||
			r.SteadyPartitionGapMS < r.SteadyGapMS {
			t.Errorf("%s: a partition's pause is shorter than the group's: %+v", r.Case, r)
		}
		if (r.InheritMS > 0) != (r.Members >= 2) {
			t.Errorf("%s: inherit %v ms with %d members (measured with 2 or more)", r.Case, r.InheritMS, r.Members)
		}
	}
}
