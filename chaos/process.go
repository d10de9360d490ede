package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one running child `doris-sink` command. It follows the
// child's JSON log lines on stderr so that the campaign waits on events
// (a checkpoint decided up to an offset, recovery done), never on sleeps.
type Process struct {
	cmd *exec.Cmd

	mu      sync.Mutex
	tail    []string // the last maxTail log lines
	decided int64    // highest sum of end offsets of a "checkpoint decided" line
	ready   bool     // "recovered; reading" seen
	// parts is the highest decided offset per "topic/partition" (the end
	// of a "checkpoint decided" line, the start of a "recovered; reading"
	// line): a group member logs only its slots' partitions, so the
	// group's progress is the per-partition maximum over its members.
	parts map[string]int64
	// decisions are the "checkpoint decided" lines, failed counts
	// "checkpoint failed" lines; lines counts every line (a Mark).
	decisions []Decision
	failed    int
	lines     int
	// msgs counts the lines per message; generations are the group
	// generations of the "group mode: slots assigned" lines.
	msgs        map[string]int
	generations map[int64]bool
	// memberID is the group member id of the last "group mode: slots
	// assigned" line.
	memberID string
	// notify, when set, is called after every line (outside the lock).
	notify  func()
	more    chan struct{}
	done    chan struct{}
	waitErr error
}

// StartProcess runs binary with args and extra environment; the caller's
// DORIS_SINK_* variables are not inherited.
func StartProcess(binary string, args []string, env ...string) (*Process, error) {
	return startProcess(binary, args, nil, env...)
}

// startProcess is StartProcess with notify called after every log line
// and at exit (nil: none).
func startProcess(binary string, args []string, notify func(), env ...string) (*Process, error) {
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DORIS_SINK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start %v: %w", args, err)
	}
	cmd.Stdout = io.Discard
	p := &Process{cmd: cmd, parts: map[string]int64{}, msgs: map[string]int{}, generations: map[int64]bool{}, notify: notify, more: make(chan struct{}), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %v: %w", args, err)
	}
	go p.follow(stderr)
	return p, nil
}

func (p *Process) follow(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var m map[string]any
		_ = json.Unmarshal([]byte(line), &m)
		p.mu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > 2*maxTail { // bounded memory, amortised trimming
			p.tail = append(p.tail[:0], p.tail[len(p.tail)-maxTail:]...)
		}
		p.lines++
		msg, _ := m["msg"].(string)
		p.msgs[msg]++
		switch msg {
		case msgSlotsAssigned:
			if g, ok := m["generation"].(float64); ok {
				p.generations[int64(g)] = true
			}
			if id, ok := m["member"].(string); ok && id != "" {
				p.memberID = id
			}
		case "checkpoint decided":
			p.decided = max(p.decided, sumOffsets(m["end"]))
			mergeOffsets(p.parts, m["end"])
			d := Decision{Line: Mark(p.lines), Start: map[string]int64{}, End: map[string]int64{}, At: time.Now()}
			mergeOffsets(d.Start, m["start"])
			mergeOffsets(d.End, m["end"])
			p.decisions = append(p.decisions, d)
		case "checkpoint failed":
			p.failed++
		case "recovered; reading":
			// The start is the end of the last decided checkpoint.
			p.ready = true
			p.decided = max(p.decided, sumOffsets(m["start"]))
			mergeOffsets(p.parts, m["start"])
		}
		close(p.more)
		p.more = make(chan struct{})
		p.mu.Unlock()
		if p.notify != nil {
			p.notify()
		}
	}
	p.waitErr = p.cmd.Wait()
	close(p.done)
	if p.notify != nil {
		p.notify()
	}
}

// mergeOffsets raises into[topic/partition] to every offset of a logged
// position (either form of sumOffsets).
func mergeOffsets(into map[string]int64, pos any) {
	m, _ := pos.(map[string]any)
	merge := func(topic string, offs map[string]any) {
		for p, v := range offs {
			f, _ := v.(float64)
			key := topic + "/" + p
			into[key] = max(into[key], int64(f))
		}
	}
	offs, _ := m["offsets"].(map[string]any)
	topic, _ := m["topic"].(string)
	merge(topic, offs)
	topics, _ := m["topics"].(map[string]any)
	for t, o := range topics {
		offs, _ := o.(map[string]any)
		merge(t, offs)
	}
}

// sumOffsets sums the offsets of a logged position, of one topic
// ("offsets") or several ("topics").
func sumOffsets(pos any) int64 {
	m, _ := pos.(map[string]any)
	sum := func(offs map[string]any) int64 {
		var n int64
		for _, v := range offs {
			f, _ := v.(float64)
			n += int64(f)
		}
		return n
	}
	offs, _ := m["offsets"].(map[string]any)
	n := sum(offs)
	topics, _ := m["topics"].(map[string]any)
	for _, t := range topics {
		offs, _ := t.(map[string]any)
		n += sum(offs)
	}
	return n
}

// ErrExited is returned by the Wait* methods when the process exited
// before the awaited event.
var ErrExited = errors.New("process exited")

// waitFor waits until cond holds (checked under the lock on every log
// line), the process exits (ErrExited) or ctx ends.
func (p *Process) waitFor(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ok, more := cond(), p.more
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-more:
		case <-p.done:
			p.mu.Lock()
			ok := cond()
			p.mu.Unlock()
			if ok {
				return nil
			}
			return ErrExited
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitReady waits for the "recovered; reading" line.
func (p *Process) WaitReady(ctx context.Context) error {
	return p.waitFor(ctx, func() bool { return p.ready })
}

// WaitDecided waits until the records up to offsets (summed over
// partitions) are decided: by a "checkpoint decided" line or by recovery
// starting there.
func (p *Process) WaitDecided(ctx context.Context, offsets int64) error {
	return p.waitFor(ctx, func() bool { return p.decided >= offsets })
}

// Decided returns the highest decided end offset sum seen.
func (p *Process) Decided() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.decided
}

// Partitions returns a copy of the highest decided offset per
// "topic/partition" seen in the child's log.
func (p *Process) Partitions() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.parts))
	for k, v := range p.parts {
		out[k] = v
	}
	return out
}

// Mark is a point in the child's log (the count of lines so far): Since
// tells what happened after it.
type Mark int

// Mark returns the current point in the child's log.
func (p *Process) Mark() Mark {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Mark(p.lines)
}

// Decision is one "checkpoint decided" line: its place in the log and its
// range per "topic/partition".
type Decision struct {
	Line       Mark
	Start, End map[string]int64
	// At is when the harness read the line.
	At time.Time
}

// DecisionsSince returns the decisions logged after m.
func (p *Process) DecisionsSince(m Mark) []Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Decision
	for _, d := range p.decisions {
		if d.Line > m {
			out = append(out, d)
		}
	}
	return out
}

// Group-mode log messages of `doris-sink run` the campaign counts.
const (
	msgSlotsAssigned = "group mode: slots assigned"
	msgSlotsLost     = "group mode: slots lost"
	// msgJoining: the member passed its startup checks and joins.
	msgJoining = "group mode: joining the job's consumer group"
	// msgSlotJobRunning: the member owns a slot and runs its job.
	msgSlotJobRunning = "group mode: slot job running"
)

// Count returns how many lines whose message starts with prefix the
// child logged.
func (p *Process) Count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.countLocked(prefix)
}

// countLocked is Count with p.mu held.
func (p *Process) countLocked(prefix string) int {
	n := 0
	for msg, c := range p.msgs {
		if strings.HasPrefix(msg, prefix) {
			n += c
		}
	}
	return n
}

// Generations returns the group generations the child was assigned slots
// in.
func (p *Process) Generations() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int64, 0, len(p.generations))
	for g := range p.generations {
		out = append(out, g)
	}
	return out
}

// Failed returns how many "checkpoint failed" lines the child logged.
func (p *Process) Failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// MemberID is the group member id the child last logged slots assigned
// under ("" before any).
func (p *Process) MemberID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.memberID
}

// Pause stops the child with SIGSTOP (a process frozen by a GC pause, a
// VM migration or a debugger: it holds its sockets and wakes up later
// believing it still owns what it owned); Resume continues it.
func (p *Process) Pause() { p.Signal(syscall.SIGSTOP) }

// Resume sends SIGCONT to a paused child.
func (p *Process) Resume() { p.Signal(syscall.SIGCONT) }

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the exit and returns the exit code (-1 for "killed by a
// signal").
func (p *Process) Wait(ctx context.Context) (int, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return 0, fmt.Errorf("wait for exit: %w", ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if p.waitErr != nil {
		return 0, p.waitErr
	}
	return 0, nil
}

// Signal sends s (no-op after exit).
func (p *Process) Signal(s os.Signal) {
	if !p.Exited() {
		_ = p.cmd.Process.Signal(s)
	}
}

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() {
	p.Signal(syscall.SIGKILL)
	<-p.done
}

// maxTail is how many log lines a Process keeps.
const maxTail = 400

// Tail returns the last n (at most maxTail) lines of the child's log.
func (p *Process) Tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.tail
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
