package run

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
)

// stopper turns SIGINT/SIGTERM into what the run's phase needs, from the
// moment the logger exists: before loading begins (config checks, the
// start-up probes of Kafka and Doris, opening the checkpoint store, the
// slot topic) the first signal cancels the start context, so every wait
// there ends at once; once the job is built (loading) it drains the job
// (the documented drain bound applies, never cut). The second signal
// aborts (the run context is cancelled) in either phase.
type stopper struct {
	log   *slog.Logger
	abort context.CancelFunc
	// start is cancelled by the first signal of the start phase.
	start     context.Context
	stopStart context.CancelFunc
	quit      chan struct{}
	done      chan struct{}

	mu    sync.Mutex
	sig   os.Signal       // the first signal; nil before it
	drain func(os.Signal) // nil while starting
}

// startStopper listens on sigs until close. runCtx is the run's context
// (abort cancels it); the start context it returns (stopper.start) is a
// child of runCtx.
func startStopper(runCtx context.Context, abort context.CancelFunc, sigs <-chan os.Signal, log *slog.Logger) *stopper {
	s := &stopper{log: log, abort: abort, quit: make(chan struct{}), done: make(chan struct{})}
	s.start, s.stopStart = context.WithCancel(runCtx)
	go s.listen(sigs)
	return s
}

func (s *stopper) listen(sigs <-chan os.Signal) {
	defer close(s.done)
	select {
	case sig := <-sigs:
		s.first(sig)
	case <-s.quit:
		return
	}
	select {
	case sig := <-sigs:
		s.log.Warn("second signal: aborting the open transaction", "signal", sig.String())
		s.abort()
	case <-s.quit:
	}
}

func (s *stopper) first(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sig = sig
	if s.drain != nil {
		s.drain(sig)
		return
	}
	s.log.Warn("signal: stopping before loading began: nothing was read (a second signal aborts)", "signal", sig.String())
	s.stopStart()
}

// loading ends the start phase: from now on the first signal calls drain
// (at once when a signal already came: the start it cut returns, or it
// finished anyway).
func (s *stopper) loading(drain func(os.Signal)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drain = drain
	if s.sig != nil {
		drain(s.sig)
	}
}

// stoppedStart reports whether the first signal came before loading
// began.
func (s *stopper) stoppedStart() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig != nil && s.drain == nil
}

// close stops listening and waits for the listener.
func (s *stopper) close() {
	close(s.quit)
	<-s.done
	s.stopStart()
}

// startOutcome is Run's answer for err, returned by a start step (a probe,
// opening the store, building the job): after a signal that cut the start,
// a step cut while healthy (err wraps context.Canceled) is a clean stop
// (nil: exit 0, nothing was read); a step that was failing returns its
// last failure, which does not wrap context.Canceled (exit 1, naming what
// fails: startRetry). Without a signal, err as is.
func (s *stopper) startOutcome(err error) error {
	if err == nil || !s.stoppedStart() {
		return err
	}
	if errors.Is(err, context.Canceled) {
		s.log.Info("stopped before loading began: nothing was read or loaded", "err", err)
		return nil
	}
	return err
}
