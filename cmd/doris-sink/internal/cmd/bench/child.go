package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// WorkerCommand says how to start a bench child: the program, its
// arguments and extra environment ("K=V"). The default re-executes this
// binary as `doris-sink bench worker`.
type WorkerCommand func() (path string, args, env []string, err error)

// DefaultWorkerCommand re-executes the running doris-sink binary.
func DefaultWorkerCommand() (string, []string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("bench: find own executable: %w", err)
	}
	return exe, []string{"bench", "worker"}, nil, nil
}

// measured is one child's outcome.
type measured struct {
	res       workerResult
	cpu       time.Duration // child user + system
	parentCPU time.Duration // this process (broker, emulator) meanwhile
	rssMB     float64       // child peak RSS
	wall      time.Duration // exec to exit
	started   time.Time     // just before exec
}

func (o *Options) command(ctx context.Context, s spec) (*exec.Cmd, *bytes.Buffer, error) {
	wc := o.Worker
	if wc == nil {
		wc = DefaultWorkerCommand
	}
	path, args, env, err := wc()
	if err != nil {
		return nil, nil, err
	}
	in, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(in)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	return cmd, stderr, nil
}

// runChild runs spec s in a child process and returns its measures.
func (o *Options) runChild(ctx context.Context, s spec) (measured, error) {
	var m measured
	cmd, stderr, err := o.command(ctx, s)
	if err != nil {
		return m, err
	}
	stdout := &bytes.Buffer{}
	cmd.Stdout = stdout
	p0 := selfCPU()
	m.started = time.Now()
	err = cmd.Run()
	m.wall = time.Since(m.started)
	m.parentCPU = selfCPU() - p0
	if err != nil {
		return m, fmt.Errorf("bench worker %s: %w: %s", s.Kind, err, lastLines(stderr.String()))
	}
	m.cpu, m.rssMB = usage(cmd.ProcessState)
	if m.res, err = lastResult(stdout.Bytes()); err != nil {
		return m, fmt.Errorf("bench worker %s: %w: %s", s.Kind, err, lastLines(stderr.String()))
	}
	if m.res.PeakRSSMB > 0 {
		m.rssMB = m.res.PeakRSSMB // see peakRSS: rusage maxrss carries the parent's peak
	}
	return m, nil
}

// DefaultVictimReadyWithin bounds the wait for a victim's "ready" event
// (its first committed checkpoint, then a record mid-stream): a victim
// that never gets there is an error naming the bound, never a hang.
const DefaultVictimReadyWithin = 3 * time.Minute

// killWhenReady runs spec s (a victim) and kills it with SIGKILL as soon
// as it prints its "ready" event, or fails after o.VictimReadyWithin.
func (o *Options) killWhenReady(ctx context.Context, s spec) error {
	within := o.VictimReadyWithin
	if within <= 0 {
		within = DefaultVictimReadyWithin
	}
	vctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	cmd, stderr, err := o.command(vctx, s)
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	notReady := func() error {
		return fmt.Errorf("bench victim not ready within %v (no checkpoint committed, or its writes never reached the hook): %s",
			within, lastLines(stderr.String()))
	}
	if err := cmd.Start(); err != nil {
		if vctx.Err() != nil && ctx.Err() == nil {
			return notReady()
		}
		return fmt.Errorf("bench victim: %w", err)
	}
	ready := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var r workerResult
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Event == "ready" {
			ready = true
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				return fmt.Errorf("kill -9 victim: %w", err)
			}
			break
		}
	}
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if !ready {
		if vctx.Err() != nil && ctx.Err() == nil {
			return notReady()
		}
		return fmt.Errorf("bench victim exited before it was ready: %v: %s", werr, lastLines(stderr.String()))
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return fmt.Errorf("bench victim: expected a kill, got %v", werr)
	}
	return nil
}

// lastResult decodes the last JSON line of a worker's stdout.
func lastResult(b []byte) (workerResult, error) {
	var r workerResult
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) == 0 || len(lines[len(lines)-1]) == 0 {
		return r, errors.New("no result on stdout")
	}
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		return r, fmt.Errorf("decode result: %w", err)
	}
	return r, nil
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
