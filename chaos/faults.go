package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cycle runs one planned step. Every cycle starts with the sinks stopped
// and leaves them stopped.
func (k *campaign) cycle(ctx context.Context, st Step) error {
	delay := time.Duration(st.Delay) * time.Millisecond
	hold := time.Duration(st.Hold) * time.Millisecond
	switch st.Kind {
	case KillRandom:
		return k.killAt(ctx, st, delay)
	case KillFailpoint:
		return k.failpointCrash(ctx, st, fmt.Sprintf("%s=%d+crash", st.Failpoint, st.Skip))
	case Drain:
		return k.sigtermAt(ctx, st, delay)
	case CommitLost:
		h, err := k.c.Doris.Fault(doristest.Fault{Op: doristest.FaultCommit, DB: Database, Table: st.Table,
			ApplyThenDrop: true, Count: st.N})
		if err != nil {
			return err
		}
		defer h.Remove()
		return k.produceAndSettle(ctx, st, nil)
	case BEDown:
		return k.produceAndSettle(ctx, st, func(ps []*Process) error {
			sleep(ctx, delay)
			k.c.Doris.BEDown()
			perr := k.produce(ctx, st.Events/2+1, 0)
			sleep(ctx, hold)
			if err := k.c.Doris.BEUp(); err != nil {
				return err
			}
			return perr
		})
	case FEErrors:
		h, err := k.c.Doris.Fault(doristest.Fault{Op: doristest.FaultLoadState, DB: Database,
			Err: &doristest.FaultErr{Message: "chaos: injected FE error"}, Count: 3})
		if err != nil {
			return err
		}
		defer h.Remove()
		return k.produceAndSettle(ctx, st, func(ps []*Process) error {
			sleep(ctx, delay)
			k.c.Doris.FEDown()
			sleep(ctx, hold)
			return k.c.Doris.FEUp()
		})
	case PrecommitTimeout:
		if err := k.failpointCrash(ctx, st, loader.FailAfterDecide+"=crash"); err != nil {
			return err
		}
		k.c.Doris.TimeoutPrecommitted() // the next start heals the decided checkpoints
		return nil
	case TxnCap:
		if err := k.c.Doris.SetFEConfig(doristest.ConfMaxRunningTxnPerDB, int64(min(st.N, 2))); err != nil {
			return err
		}
		restored := false
		restore := func() error {
			if restored {
				return nil
			}
			restored = true
			return k.c.Doris.SetFEConfig(doristest.ConfMaxRunningTxnPerDB, 1000)
		}
		defer restore()
		return k.produceAndSettle(ctx, st, func(ps []*Process) error {
			sleep(ctx, hold)
			return restore()
		})
	case SlowLoad:
		return k.slowLoad(ctx, st, delay)
	case KafkaRestart:
		return k.produceAndSettle(ctx, st, func(ps []*Process) error {
			sleep(ctx, delay)
			if err := k.c.RestartKafka(); err != nil {
				return err
			}
			return k.produce(ctx, st.Events/2+1, 0)
		})
	case MalformedDLQ:
		if err := k.produce(ctx, st.Events, 1+st.N*3); err != nil {
			return err
		}
		return k.settle(ctx, true, func(ps []*Process) error { return k.waitReady(ctx, ps) })
	case MalformedNoDLQ:
		return k.malformedNoDLQ(ctx, st)
	case LabelExpiry:
		return k.labelExpiry(ctx, st)
	case SchemaChange:
		return k.schemaChange(ctx, st)
	case RegistryDown:
		return k.registryDown(ctx, st)
	}
	return fmt.Errorf("unknown fault kind %q", st.Kind)
}

// produceAndSettle produces the step's events, runs the sinks with during
// applied after recovery, and drains them.
func (k *campaign) produceAndSettle(ctx context.Context, st Step, during func([]*Process) error) error {
	if err := k.produce(ctx, st.Events, 0); err != nil {
		return err
	}
	return k.settle(ctx, false, func(ps []*Process) error {
		if err := k.waitReady(ctx, ps); err != nil {
			return err
		}
		if during != nil {
			return during(ps)
		}
		return nil
	})
}

// startReady produces the step's events, starts every sink and waits for
// their recovery; delay later (a random moment while they load) it
// returns them running. On an error every sink is killed.
func (k *campaign) startReady(ctx context.Context, st Step, delay time.Duration) ([]*Process, error) {
	if err := k.produce(ctx, st.Events, 0); err != nil {
		return nil, err
	}
	ps, err := k.start(false)
	if err != nil {
		return nil, err
	}
	if err := k.waitReady(ctx, ps); err != nil {
		killAll(ps)
		return nil, err
	}
	sleep(ctx, delay)
	return ps, nil
}

// sigtermAt SIGTERMs every sink delay after its recovery, while it loads:
// each must drain and exit 0.
func (k *campaign) sigtermAt(ctx context.Context, st Step, delay time.Duration) error {
	ps, err := k.startReady(ctx, st, delay)
	if err != nil {
		return err
	}
	for _, p := range ps {
		p.Signal(syscall.SIGTERM)
	}
	for i, p := range ps {
		code, err := k.exit(ctx, p)
		if err != nil {
			killAll(ps)
			return k.procErr(i, p, "drain", err)
		}
		k.res.Kills["drain"]++
		if code != 0 {
			killAll(ps)
			return k.procErr(i, p, "drain", fmt.Errorf("exit code %d after SIGTERM, want 0", code))
		}
	}
	return nil
}

// killAt SIGKILLs every sink delay after its recovery, while it loads.
func (k *campaign) killAt(ctx context.Context, st Step, delay time.Duration) error {
	ps, err := k.startReady(ctx, st, delay)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Exited() {
			code, _ := p.Wait(ctx)
			killAll(ps)
			return fmt.Errorf("a sink exited on its own (code %d) before SIGKILL\n%s", code, p.Tail(15))
		}
		p.Kill()
		k.res.Kills["sigkill"]++
	}
	return nil
}

// failpointCrash runs the sinks with spec armed; each exits 137 at the
// failpoint or, when it never fires, is killed once everything is decided.
func (k *campaign) failpointCrash(ctx context.Context, st Step, spec string) error {
	if err := k.produce(ctx, st.Events, 0); err != nil {
		return err
	}
	ps, err := k.start(false, "DORIS_SINK_FAILPOINTS="+spec)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(spec, "=")
	for i, p := range ps {
		wctx, cancel := k.waitCtx(ctx)
		werr := p.WaitDecided(wctx, k.records)
		cancel()
		if werr != nil && werr != ErrExited {
			killAll(ps)
			return k.procErr(i, p, "failpoint "+spec, werr)
		}
		if !p.Exited() {
			p.Kill()
			k.res.Kills["failpoint-not-reached"]++
			continue
		}
		code, err := p.Wait(ctx)
		if err != nil {
			return err
		}
		if code != 137 {
			killAll(ps)
			return k.procErr(i, p, "failpoint "+spec, fmt.Errorf("exit code %d, want 137 (crash)", code))
		}
		k.res.Kills["failpoint:"+name]++
	}
	return nil
}

// slowLoad blocks one Stream Load (body or precommit), then releases it or
// kills the sinks while it is blocked.
func (k *campaign) slowLoad(ctx context.Context, st Step, delay time.Duration) error {
	op := doristest.FaultStream
	if st.N%2 == 0 {
		op = doristest.FaultPrecommit
	}
	h, err := k.c.Doris.Fault(doristest.Fault{Op: op, DB: Database, Table: st.Table, Block: true})
	if err != nil {
		return err
	}
	defer h.Remove()
	if err := k.produce(ctx, st.Events, 0); err != nil {
		return err
	}
	ps, err := k.start(false)
	if err != nil {
		return err
	}
	wctx, cancel := k.waitCtx(ctx)
	err = h.Wait(wctx, 1)
	cancel()
	if err != nil {
		killAll(ps)
		return fmt.Errorf("blocked %s never hit: %w", op, err)
	}
	sleep(ctx, delay)
	if st.Kill {
		for _, p := range ps {
			p.Kill()
			k.res.Kills["sigkill"]++
		}
		h.Release()
		return nil
	}
	h.Release()
	return k.drain(ctx, ps)
}

// malformedNoDLQ: without a dead-letter topic the sinks must refuse the
// bad record (exit non-zero naming topic/partition@offset, never skip it);
// the operator then runs them with the dead-letter topic.
func (k *campaign) malformedNoDLQ(ctx context.Context, st Step) error {
	if err := k.produce(ctx, st.Events, st.N); err != nil {
		return err
	}
	ps, err := k.start(false)
	if err != nil {
		return err
	}
	for i, p := range ps {
		code, err := k.exit(ctx, p)
		if err != nil {
			killAll(ps)
			return k.procErr(i, p, "refusal of a malformed record", err)
		}
		if code == 0 || code == 137 || !strings.Contains(p.Tail(maxTail), Topic+"/") {
			killAll(ps)
			return k.procErr(i, p, "refusal of a malformed record", fmt.Errorf("exit code %d; want non-zero naming %s/<partition>@<offset>", code, Topic))
		}
		k.res.Kills["refused:malformed"]++
	}
	return k.settle(ctx, true, func(ps []*Process) error { return k.waitReady(ctx, ps) })
}

// labelExpiry: crash at st.Failpoint (default after-decide), then, while
// the sinks are down, time the PRECOMMITTED txn out and expire every
// finished label. Restarting must refuse with the loader's UnresolvedError
// naming label, txn and `checkpoint resolve` (exit non-zero, never a
// silent skip or replay); the operator, who knows what happened to the
// txn, runs `checkpoint resolve`: --assume aborted after after-decide (the
// txn timed out: rows absent), --assume visible after
// after-commit-before-ledger (committed: rows present). The next start
// heals or moves on.
func (k *campaign) labelExpiry(ctx context.Context, st Step) error {
	fp := loader.FailAfterDecide
	if st.Failpoint == loader.FailAfterCommitBeforeLedger {
		fp = st.Failpoint
	}
	before := k.res.Kills["failpoint:"+fp]
	if err := k.failpointCrash(ctx, st, fp+"=crash"); err != nil {
		return err
	}
	if k.res.Kills["failpoint:"+fp] == before {
		return nil // no sink crashed there: nothing to expire
	}
	k.c.Doris.TimeoutPrecommitted()
	// What the operator knows from elsewhere (the table's contents): which
	// labels were visible before Doris forgot them. With several tables in
	// a decision a crash in the commit phase leaves some txns committed and
	// others aborted by the timeout above: each is assumed as it was.
	truth := map[string]doris.TxnStatus{}
	for _, s := range k.sinks {
		stt, err := k.readState(ctx, s)
		if err != nil {
			return err
		}
		if d := stt.Decided; d != nil {
			for _, tx := range d.Txns {
				truth[tx.Label] = k.c.Doris.LabelState(Database, tx.Label)
			}
		}
	}
	k.c.Doris.ExpireLabels(Database)
	for _, s := range k.sinks {
		stt, err := k.readState(ctx, s)
		if err != nil {
			return err
		}
		if stt.Decided == nil || stt.Decided.Committed {
			continue // this sink's crash did not leave a pending decision
		}
		for _, tx := range stt.Decided.Txns {
			if tx.Committed {
				continue
			}
			if err := k.refusedAfterExpiry(ctx, s, tx); err != nil {
				return err
			}
			assume := checkpoint.ResolvedAborted
			if truth[tx.Label] == doris.TxnVisible {
				assume = checkpoint.ResolvedVisible
			}
			if err := k.resolve(ctx, s, stt.Decided.ID, assume, tx.Table); err != nil {
				return err
			}
		}
	}
	return nil
}

// readState reads sink s's checkpoint state where its job.coordinator
// keeps it: the file store in its data dir, or (kafka, the default) its
// Kafka state topic (read-only, as `checkpoint show` reads it).
func (k *campaign) readState(ctx context.Context, s *Sink) (*checkpoint.State, error) {
	if k.cfg.Coordinator == "file" {
		return checkpoint.ReadFile(s.DataDir)
	}
	sn, err := coordlog.ReadSnapshot(ctx, s.Name, []kgo.Opt{kgo.SeedBrokers(k.c.Brokers())})
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", s.Name, err)
	}
	st, _, _, err := sn.StateOf(coordlog.DefaultScope)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", s.Name, err)
	}
	return st, nil
}

// refusedAfterExpiry runs sink s, which must refuse to start, naming the
// expired label and txn of tx and `checkpoint resolve`.
func (k *campaign) refusedAfterExpiry(ctx context.Context, s *Sink, tx checkpoint.Txn) error {
	p, err := StartProcess(k.cfg.Binary, []string{"run", "-c", s.Config})
	if err != nil {
		return err
	}
	code, err := k.exit(ctx, p)
	if err != nil {
		p.Kill()
		return fmt.Errorf("sink %s: expected a refusal after label expiry: %w\n%s", s.Name, err, p.Tail(15))
	}
	log := p.Tail(maxTail)
	if code == 0 || !strings.Contains(log, tx.Label) || !strings.Contains(log, "checkpoint resolve") ||
		!strings.Contains(log, strconv.FormatInt(tx.TxnID, 10)) {
		return fmt.Errorf("sink %s: after label expiry exit %d; want non-zero naming label %s, txn %d and `checkpoint resolve`\n%s",
			s.Name, code, tx.Label, tx.TxnID, p.Tail(15))
	}
	k.res.Kills["refused:label-expired"]++
	return nil
}

// resolve runs `doris-sink checkpoint resolve` as the operator would.
func (k *campaign) resolve(ctx context.Context, s *Sink, id uint64, assume, table string) error {
	p, err := StartProcess(k.cfg.Binary, []string{"checkpoint", "resolve", "-c", s.Config,
		"--checkpoint", strconv.FormatUint(id, 10), "--assume", assume, "--table", table, "--yes"})
	if err != nil {
		return err
	}
	code, err := k.exit(ctx, p)
	if err != nil || code != 0 {
		return fmt.Errorf("sink %s: checkpoint resolve %d --assume %s: exit %d, %v\n%s", s.Name, id, assume, code, err, p.Tail(15))
	}
	return nil
}
