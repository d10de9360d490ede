package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemberCommand says how to start one group member, `doris-sink run -c
// config`: the program, its arguments and extra environment. The default
// re-executes this binary.
type MemberCommand func(config string) (path string, args, env []string, err error)

// DefaultMemberCommand re-executes the running doris-sink binary as
// `doris-sink run -c config`.
func DefaultMemberCommand(config string) (string, []string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("bench: find own executable: %w", err)
	}
	return exe, []string{"run", "-c", config}, nil, nil
}

// decision is one "checkpoint decided" line of a member: when (the log
// line's time), how many records, and its range per partition.
type decision struct {
	at         time.Time
	member     int
	records    int64
	start, end map[int32]int64
}

// partitions are the partitions whose range the decision advanced.
func (d decision) partitions() []int32 {
	var out []int32
	for p, e := range d.end {
		if e > d.start[p] {
			out = append(out, p)
		}
	}
	return out
}

// groupLog gathers the JSON log lines of every member of a group case.
type groupLog struct {
	mu        sync.Mutex
	decisions []decision
	ready     map[int]time.Time // first "recovered; reading" per member
	changed   chan struct{}
}

func newGroupLog() *groupLog {
	return &groupLog{ready: map[int]time.Time{}, changed: make(chan struct{})}
}

// member is one running `doris-sink run` of a group case.
type member struct {
	id   int
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's, once done

	mu   sync.Mutex
	tail []string
}

// startMember starts member id with config and follows its stderr.
func (o *Options) startMember(l *groupLog, id int, config string) (*member, error) {
	mc := o.Member
	if mc == nil {
		mc = DefaultMemberCommand
	}
	path, args, env, err := mc(config)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("bench member %d: %w", id, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench member %d: %w", id, err)
	}
	m := &member{id: id, cmd: cmd, done: make(chan struct{})}
	go m.follow(l, stderr)
	return m, nil
}

func (m *member) follow(l *groupLog, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m.mu.Lock()
		m.tail = append(m.tail, line)
		if len(m.tail) > 40 {
			m.tail = m.tail[len(m.tail)-20:]
		}
		m.mu.Unlock()
		l.add(m.id, []byte(line))
	}
	m.err = m.cmd.Wait()
	close(m.done)
	l.notify()
}

// lastLines returns the member's last n log lines.
func (m *member) lastLines(n int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tail
	if len(t) > n {
		t = t[len(t)-n:]
	}
	return strings.Join(t, "\n")
}

func (m *member) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits for the exit (bounded by ctx).
func (m *member) stop(ctx context.Context, sig syscall.Signal) error {
	if !m.exited() {
		_ = m.cmd.Process.Signal(sig)
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		_ = m.cmd.Process.Kill()
		<-m.done
		return fmt.Errorf("bench member %d did not exit after %s: %w", m.id, sig, ctx.Err())
	}
	if sig == syscall.SIGTERM && m.err != nil {
		return fmt.Errorf("bench member %d: drain after SIGTERM: %w: %s", m.id, m.err, m.lastLines(5))
	}
	return nil
}

// logLine is the part of a `doris-sink run` JSON log line the bench reads.
type logLine struct {
	Time    time.Time       `json:"time"`
	Msg     string          `json:"msg"`
	Records int64           `json:"records"`
	Start   json.RawMessage `json:"start"`
	End     json.RawMessage `json:"end"`
}

// offsetsOf decodes a logged one-topic position {"topic":..,"offsets":{..}}.
func offsetsOf(raw json.RawMessage) map[int32]int64 {
	var pos struct {
		Offsets map[string]int64 `json:"offsets"`
	}
	_ = json.Unmarshal(raw, &pos)
	out := make(map[int32]int64, len(pos.Offsets))
	for k, v := range pos.Offsets {
		if p, err := strconv.ParseInt(k, 10, 32); err == nil {
			out[int32(p)] = v
		}
	}
	return out
}

func (l *groupLog) add(id int, b []byte) {
	var ln logLine
	if json.Unmarshal(b, &ln) != nil {
		return
	}
	switch ln.Msg {
	case "checkpoint decided":
		d := decision{at: ln.Time, member: id, records: ln.Records, start: offsetsOf(ln.Start), end: offsetsOf(ln.End)}
		l.mu.Lock()
		l.decisions = append(l.decisions, d)
		l.mu.Unlock()
	case "recovered; reading":
		l.mu.Lock()
		if _, ok := l.ready[id]; !ok {
			l.ready[id] = ln.Time
		}
		l.mu.Unlock()
	default:
		return
	}
	l.notify()
}

func (l *groupLog) notify() {
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// wait waits until cond (called under the lock) holds, or ctx ends, or
// failed (called without the lock) returns an error.
func (l *groupLog) wait(ctx context.Context, what string, cond func() bool, failed func() error) error {
	for {
		l.mu.Lock()
		ok, ch := cond(), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		if failed != nil {
			if err := failed(); err != nil {
				return fmt.Errorf("bench group: %s: %w", what, err)
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("bench group: %s: %w", what, ctx.Err())
		}
	}
}

// decidedUpTo reports whether every partition of end is decided up to its
// end offset (caller holds the lock).
func (l *groupLog) decidedUpTo(end map[int32]int64) bool {
	got := map[int32]int64{}
	for _, d := range l.decisions {
		for p, e := range d.end {
			got[p] = max(got[p], e)
		}
	}
	for p, e := range end {
		if got[p] < e {
			return false
		}
	}
	return true
}

// snapshot returns a copy of the decisions so far.
func (l *groupLog) snapshot() []decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]decision(nil), l.decisions...)
}

// longestGap is the longest time without a decision that loaded records,
// among the decisions of ds, over the window [from, to]: the gaps between
// consecutive loading decisions, the first starting at the last one
// before from, the last ending at the first one after to (or at to).
func longestGap(ds []decision, from, to time.Time) time.Duration {
	var times []time.Time
	for _, d := range ds {
		if d.records > 0 {
			times = append(times, d.at)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	prev := from
	for _, t := range times {
		if t.After(from) {
			break
		}
		prev = t
	}
	var gap time.Duration
	for _, t := range times {
		if !t.After(from) {
			continue
		}
		gap = max(gap, t.Sub(prev))
		prev = t
		if t.After(to) {
			return gap
		}
	}
	return max(gap, to.Sub(prev))
}

// longestPartitionGap is longestGap per partition: for each partition the
// longest time without a decision that advanced it, over [from, to]; the
// largest over the partitions. While records arrive on every partition it
// is the pause of the partitions that moved between members.
func longestPartitionGap(ds []decision, from, to time.Time) time.Duration {
	per := map[int32][]decision{}
	for _, d := range ds {
		for _, p := range d.partitions() {
			per[p] = append(per[p], decision{at: d.at, records: 1})
		}
	}
	var gap time.Duration
	for _, pd := range per {
		gap = max(gap, longestGap(pd, from, to))
	}
	return gap
}
