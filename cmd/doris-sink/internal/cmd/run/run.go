// Package run implements `doris-sink run`: it builds the Doris client,
// the checkpoint store and ledger in job.data_dir, the loader and the
// Kafka connector from the configuration and runs them until a signal.
//
// Signals: the first SIGINT/SIGTERM drains (the records consumed so far
// are checkpointed and committed, exit 0), from any state: a retry wait
// ends at once and the drain budget bounds the rest (exit 1 with a
// *kafka.DrainError when the job was failing); a second one aborts (the
// open transaction is aborted, nothing more is decided, exit 130). The
// exit log line says what was loaded: the number of checkpoints this run
// decided and the last decided checkpoint and position. Failpoints
// are armed from DORIS_SINK_FAILPOINTS (the only place it is read); a
// crash action ends the process at once with exit code 137 and no
// cleanup, like kill -9.
package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/drift"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// FailpointsEnv arms loader failpoints in `run`:
// "after-precommit=crash;mid-commit=2*error" (loader.ParseFailpoints).
const FailpointsEnv = "DORIS_SINK_FAILPOINTS"

// ExitCrashed is the exit code of a failpoint crash (128+SIGKILL).
const ExitCrashed = cmdutil.ExitCrashed

// Options are the inputs of `doris-sink run`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	// ConfigFile is -c.
	ConfigFile string
	// Signals delivers SIGINT/SIGTERM; nil: the process's signals.
	Signals <-chan os.Signal
	// Exit ends the process after a failpoint crash; nil: os.Exit.
	Exit func(code int)

	loadConfig func() (*config.Config, error)
	// groupKnobs are group mode's testing hooks (nil: none).
	groupKnobs *GroupKnobs
}

// NewCmdRun returns the run command. runF replaces Run in tests (nil:
// Run).
func NewCmdRun(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "run [-c config.yaml]",
		Short: "Load a Kafka topic into a Doris table exactly once",
		Long: `run reads kafka.topic and loads it into doris.database.doris.table with Stream Load
two-phase commit, checkpointing every delivery.checkpoint_interval. On start it
resolves every label the checkpoint store names before reading (see
docs/operations.md).

SIGINT/SIGTERM drains: what was read is checkpointed and committed, exit 0;
it is honoured in every state (retry waits end at once, the drain budget
bounds the rest). A second signal aborts: the open transaction is aborted,
exit 130.

Transient failures are retried with a backoff of 1s doubling up to
delivery.retry_backoff_max. What no retry can fix (unknown database or
table, refused credentials, a missing topic, an unwritable checkpoint store)
exits 1 with one error line after delivery.fail_fast_after; rows Doris
rejects (DATA_QUALITY_ERROR) exit 1 at once.
Metrics: http://<metrics.listen>/metrics, /healthz, /readyz, /status (read by
doris-sink status); a progress line every metrics.log_interval.`,
		Example: `  doris-sink run -c orders.yaml
  DORIS_SINK_DORIS__PASSWORD=secret doris-sink run -c orders.yaml
  doris-sink run -c connector.properties     # a Kafka Connect connector config as it is (or connector.json)
  DORIS_SINK_JOB__NAME=orders DORIS_SINK_KAFKA__TOPIC=orders ... doris-sink run   # no file: the environment alone`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.loadConfig = func() (*config.Config, error) {
				return cmdutil.LoadConfig(f, cmd, opts.ConfigFile, config.NeedRun)
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	return cmd
}

// Run runs the job until drained, aborted or failed. Stopping is driven
// by opts.Signals (main's signal context is cancelled by the first signal,
// which must drain, not abort); ctx is used for its values, and a ctx
// already cancelled when Run is called (a signal before Run listened)
// returns context.Canceled before anything starts.
func Run(ctx context.Context, opts *Options) error {
	// Listen first: a signal that arrives while the config loads, the
	// clocks are checked or the store opens waits in the channel and
	// drains the job as soon as it runs.
	sigs := opts.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	// main's signal context is cancelled by a signal that came before the
	// channel listened: start nothing.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run interrupted before it started: %w", err)
	}
	cfg, err := opts.loadConfig()
	if err != nil {
		return err
	}
	log, err := NewLogger(cfg.Log, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	fp, err := failpointsFromEnv(opts.Factory.Environ)
	if err != nil {
		return err
	}
	if fp != nil {
		log.Warn("failpoints armed from "+FailpointsEnv, "armed", strings.Join(fp.Armed(), ";"))
		fp.OnCrash(crashExit(log, opts.Exit))
	}
	client, err := opts.Factory.DorisWithLogger(cfg, log)
	if err != nil {
		return err
	}
	defer client.Close()
	for _, w := range cmdutil.SecurityWarnings(cfg, client) {
		log.Warn("security: " + w)
	}

	runCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	// Before loading begins the first signal cuts every wait of the start
	// (startCtx); once the job is built it drains the job.
	stop := startStopper(runCtx, abort, sigs, log)
	defer stop.close()
	startCtx := stop.start
	job, deps, err := startJob(startCtx, cfg, client, log, fp)
	if err != nil {
		return stop.startOutcome(err)
	}
	if cfg.GroupMode() {
		return runGroupMode(runCtx, stop, cfg, deps, opts)
	}
	m := deps.Metrics
	if cfg.Metrics.Listen != "" {
		srv, err := metrics.Serve(cfg.Metrics.Listen, m, log)
		if err != nil {
			job.Loader.Close(runCtx)
			return err
		}
		defer srv.Close()
		log.Info("metrics endpoint", "addr", "http://"+srv.Addr()+"/metrics")
	}
	if iv := cfg.Metrics.LogInterval; iv > 0 {
		tk := time.NewTicker(iv)
		defer tk.Stop()
		defer startProgress(runCtx, m, log, tk.C)()
	}
	stop.loading(func(s os.Signal) {
		log.Warn("signal: draining (a second signal aborts)", "signal", s.String())
		job.Connector.Drain()
	})

	log.Info("starting", "job", cfg.Job.Name, "topic", cfg.Kafka.DescribeTopics(), "table", job.Table,
		"guarantee", cfg.Delivery.Guarantee, "data_dir", cfg.Job.DataDir)
	err = job.Connector.Run(runCtx)
	if err := runOutcome(err, runCtx.Err() != nil, opts, log, cfg.Job.Name,
		"aborted: the open checkpoint was not decided; a restart resumes from the last decided position"); err != nil {
		return err
	}
	logDrained(log, job)
	return nil
}

// startJob is the start of a run, before loading begins; every wait in it
// takes ctx, which the first signal cancels: the source and the FE are
// checked (checkSource, checkFE: nothing of the job is created before),
// the Doris clocks and the table are read, and the job is built (the
// checkpoint store opened, the slot topic checked). In group mode job is
// nil: runGroupMode builds the slot jobs.
func startJob(ctx context.Context, cfg *config.Config, client *doris.Client, log *slog.Logger,
	fp *loader.Failpoints) (*Job, Deps, error) {
	kc, err := connectorConfig(cfg)
	if err != nil {
		return nil, Deps{}, err
	}
	if err := checkSource(ctx, cfg, kc, log); err != nil {
		return nil, Deps{}, err
	}
	if err := checkFE(ctx, cfg, client, log); err != nil {
		return nil, Deps{}, err
	}
	WarnClocks(ctx, client, cfg, log)
	fields := drift.Startup(ctx, client, cfg, log) // NULLs on type errors; fields the table lacks
	if err := CheckDeleteTable(ctx, client, cfg); err != nil && !tableToCreate(cfg, err) {
		return nil, Deps{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Deps{}, fmt.Errorf("reading the table: %w", err)
	}
	m := metrics.New()
	if cfg.GroupMode() {
		m = metrics.NewGroup(cfg.SlotCount(), cfg.Kafka.DescribeTopics(), cfg.Doris.Database+"."+cfg.Doris.Table)
	}
	deps := Deps{Doris: client, Metrics: m, Failpoints: fp, Logger: log,
		ConnectorOpts: []kafka.Opt{
			rowCheck(ctx, client, cfg, log),
			routedRowCheck(client, cfg),
			kafka.WithTableColumns(fields),
			kafka.WithRoutedTableColumns(routedColumns(client, cfg, log)),
			kafka.WithOnCheckpoint(func(s kafka.CheckpointStats) { logCheckpoint(log, s) }),
			kafka.WithTestingKnobs(&kafka.TestingKnobs{
				AfterStart: func(start kafka.Position) {
					m.SetReady(true)
					log.Info("recovered; reading", "start", start)
				},
			})}}
	if cfg.GroupMode() {
		return nil, deps, nil
	}
	job, err := BuildContext(ctx, cfg, deps)
	return job, deps, err
}

// runOutcome turns how a run (standalone or a group member) ended into
// Run's answer: a failpoint crash exits ExitCrashed at once (normally
// unreached: crashExit ended the process at the cut point), an abort by a
// second signal logs abortedLine and returns context.Canceled, another
// error names the job; nil when it drained.
func runOutcome(err error, aborted bool, opts *Options, log *slog.Logger, job, abortedLine string) error {
	switch {
	case errors.Is(err, loader.ErrCrashed):
		log.Error("failpoint crash: exiting without cleanup", "code", ExitCrashed, "err", err)
		exit := opts.Exit
		if exit == nil {
			exit = os.Exit
		}
		exit(ExitCrashed)
		return err
	case aborted:
		log.Warn(abortedLine)
		return fmt.Errorf("run aborted by a second signal: %w", context.Canceled)
	case err != nil:
		// One error line: a failure that retrying cannot fix names what
		// to change, and stands for the checkpoint and abort failures that
		// came with it (its Err is the latest). What Connector.Run joined
		// to it (the loader's close failure: a txn it could not abort, a
		// commit that did not finish) follows it, never dropped.
		var fe *kafka.FatalError
		if errors.As(err, &fe) {
			err = withJoined(fe, err)
		}
		return fmt.Errorf("run %s: %w", job, err)
	}
	return nil
}

// withJoined is fe followed, on the same line, by each error joined in
// err (errors.Join) that does not hold fe.
func withJoined(fe *kafka.FatalError, err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return fe
	}
	out := error(fe)
	for _, e := range j.Unwrap() {
		var f *kafka.FatalError
		if errors.As(e, &f) && f == fe {
			continue
		}
		out = fmt.Errorf("%w; %w", out, e)
	}
	return out
}

// logDrained says what a drained run loaded, and only that: whether this
// run decided any checkpoint, and the last decided checkpoint and
// position (where the next start resumes). The success line needs the
// last decision committed: a decision whose commit did not finish (Doris
// unreachable at the end of the drain) or that is being healed (Doris
// aborted it) is not loaded yet, and the line says so instead.
func logDrained(log *slog.Logger, job *Job) {
	n := job.Connector.Metrics().Checkpoints.Load()
	pos, decided := job.Connector.Decided()
	id, lbl, committed := job.Loader.LastDecision()
	level, msg := drainedLine(n, decided, id, committed)
	log.Log(context.Background(), level, msg, "checkpoints_decided", n, "last_checkpoint", id, "label", lbl,
		"committed", committed, "position", pos.String())
}

// drainedLine is the level and message of logDrained: n checkpoints
// decided by this run, decided whether the Connector knows a decided
// position, id and committed the store's last decision.
func drainedLine(n int64, decided bool, id uint64, committed bool) (slog.Level, string) {
	switch {
	case !decided && id == 0:
		return slog.LevelInfo, "drained: nothing was loaded: no checkpoint was ever decided (the next start uses kafka.start)"
	case id > 0 && !committed:
		return slog.LevelWarn, "drained, but the last decided checkpoint is not committed: its rows are not visible yet; " +
			"the next start commits it (or, if Doris aborted it, replays its range into the same label); nothing is lost"
	case n == 0:
		return slog.LevelInfo, "drained: nothing new was loaded by this run; the next start resumes from the last decided checkpoint"
	}
	return slog.LevelInfo, "drained: every record read was checkpointed"
}

// crashExit is the failpoint crash hook of run (loader.Failpoints.OnCrash):
// it ends the process with ExitCrashed at the cut point itself, without
// cleanup, like kill -9 there. exit nil: os.Exit.
func crashExit(log *slog.Logger, exit func(code int)) func(name string) {
	if exit == nil {
		exit = os.Exit
	}
	return func(name string) {
		log.Error("failpoint crash: exiting without cleanup", "failpoint", name, "code", ExitCrashed)
		exit(ExitCrashed)
	}
}

// failpointsFromEnv arms the failpoints named by DORIS_SINK_FAILPOINTS.
func failpointsFromEnv(environ func() []string) (*loader.Failpoints, error) {
	if environ == nil {
		return nil, nil
	}
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, FailpointsEnv+"="); ok && strings.TrimSpace(v) != "" {
			fp, err := loader.ParseFailpoints(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", FailpointsEnv, err)
			}
			return fp, nil
		}
	}
	return nil, nil
}

// logCheckpoint logs one line per checkpoint attempt: "checkpoint decided"
// with its end position (operators and the e2e tests follow it), or
// "checkpoint failed".
func logCheckpoint(log *slog.Logger, s kafka.CheckpointStats) {
	if s.Err != nil {
		log.Warn("checkpoint failed", "start", s.Start, "end", s.End, "records", s.Records, "err", s.Err)
		return
	}
	log.Info("checkpoint decided", "start", s.Start, "end", s.End, "records", s.Records, "rows", s.Rows,
		"bytes", s.RowBytes, "dead_lettered", s.DeadLettered)
}

// rowCheck is the connector's row pre-check (kafka.WithRowCheck) when a
// dead-letter topic is set: rows Doris would refuse are dead-lettered
// before they are sent. A table that cannot be read leaves it off
// (logged): Doris alone decides then.
func rowCheck(ctx context.Context, tr drift.TableReader, cfg *config.Config, log *slog.Logger) kafka.Opt {
	if cfg.Records.DeadLetterTopic == "" {
		return kafka.WithRowCheck(nil, nil)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := tr.ShowCreateTable(ctx, cfg.Doris.Database, cfg.Doris.Table)
	if err != nil {
		log.Warn("rows are not pre-checked against the table (cannot read it): Doris alone decides which it refuses",
			"table", cfg.Doris.Database+"."+cfg.Doris.Table, "err", err)
		return kafka.WithRowCheck(nil, nil)
	}
	return kafka.WithRowCheck(t, cfg.Doris.Properties)
}

// routedRowCheck pre-checks routed rows (kafka.WithRoutedRowCheck) when a
// dead-letter topic is set: each routed table is read through tr on its
// first row, and checked with its doris.properties and tables.<pattern>
// override.
func routedRowCheck(tr drift.TableReader, cfg *config.Config) kafka.Opt {
	if cfg.Records.DeadLetterTopic == "" {
		return kafka.WithRoutedRowCheck(nil, "", nil)
	}
	return kafka.WithRoutedRowCheck(tr, cfg.Doris.Database, routedProps(cfg))
}

// routedColumns reads a routed table's fields for the unknown-field
// watch (kafka.WithRoutedTableColumns) through tr, on the table's first
// row: its columns, or the "columns" property of its doris.properties with
// its tables.<pattern> override. A table that cannot be read is logged and
// left unchecked.
func routedColumns(tr drift.TableReader, cfg *config.Config, log *slog.Logger) func(context.Context, string) []string {
	props := routedProps(cfg)
	return func(ctx context.Context, table string) []string {
		db, name := cfg.Doris.Database, table
		if d, t, ok := strings.Cut(table, "."); ok {
			db, name = d, t
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		t, err := tr.ShowCreateTable(ctx, db, name)
		if err != nil {
			log.Warn("unknown JSON fields of the rows routed to the table are not counted (cannot read it)",
				"table", db+"."+name, "err", err)
			return nil
		}
		return drift.Fields(t, cfg.Records.Format != config.RecordsCSV, props(table))
	}
}

// routedProps gives a routed table's ("db.table" or "table") Stream Load
// properties for its pre-check: doris.properties with its
// tables.<pattern> override, as Build's loader gives its loads.
func routedProps(cfg *config.Config) func(table string) map[string]string {
	return func(table string) map[string]string {
		if _, t, ok := strings.Cut(table, "."); ok {
			table = t
		}
		p, _ := cfg.TableSettings(table, cfg.Doris.Properties)
		return p
	}
}
