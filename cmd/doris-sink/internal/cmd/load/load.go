// Package load is `doris-sink load FILE… --table db.t`: an atomic,
// parallel, resumable file load (package loader/fileload).
package load

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/fileload"
)

// Options are the inputs of `doris-sink load`.
type Options struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string

	Files      []string
	Table      string
	Workers    int
	Format     string
	ChunkBytes int64
	Store      string
	Split      bool
	AssumeMBps int64
	Headers    []string
	Compress   string

	// Exit ends the process after a failpoint crash; nil: os.Exit.
	Exit func(code int)
	// ErrIsTTY: stderr is a terminal (progress line); set by Complete
	// from IO.ErrOut.
	ErrIsTTY bool

	db, table string
	headers   map[string]string
	comp      doris.Compression
	client    *doris.Client
}

// NewCmdLoad returns `doris-sink load`; runF replaces Run in tests (called
// after Validate).
func NewCmdLoad(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	o := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "load FILE... --table db.table",
		Short: "Load files into a Doris table atomically, in parallel, resumably",
		Long: `Load CSV or JSON-lines files (plain or .gz) into one Doris table, all or nothing.

The files are split into chunks on line boundaries; W workers each stream a
contiguous run of chunks through ONE two-phase-commit Stream Load. The labels
are recorded in a local store before any load begins; once every worker has
precommitted, one decision (every txn id and the file positions) is written
to the store, then every txn is committed, in file order. Before the decision
nothing is visible and any failure aborts every txn. After it the commits
complete even across kill -9: run the same command again and it commits the
decided txns (or, after a failure before the decision, loads again).

Rows appear in stages for the seconds the commits take (one commit per
worker, in order): a reader during those seconds sees a prefix of the files.

The load is refused before anything begins when --workers exceeds the FE's
max_running_txn_num_per_db, or when its estimated duration (at --assume-mbps
per worker) exceeds half of stream_load_default_precommit_timeout_second;
--split then loads it in rounds, each atomic and resumable from the file
position the last committed round reached (the load as a whole is then not
atomic). Connection settings come from -c (doris.fe, doris.user, ...); only
the doris.* keys of the config are read and checked, so a run job's config
can be given as is. Its doris.properties are sent as Stream Load headers
(column_separator, columns, max_filter_ratio, ...); a -H header overrides the
property of the same name. Its doris.format, when set, is the files' format
unless --format is given.`,
		Example: `  $ doris-sink load -c doris.yaml --table demo.orders orders-*.csv
  $ doris-sink load -c doris.yaml --table demo.events --format json --workers 8 events.json.gz
  $ doris-sink load -c doris.yaml --table demo.t -H column_separator:, a.csv -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Cmd = c
			if err := o.Validate(args); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), o)
			}
			if err := o.Complete(); err != nil {
				return err
			}
			defer o.client.Close()
			return o.Run(c.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Table, "table", "t", "", "target table, db.table (or table with doris.database)")
	fs.IntVarP(&o.Workers, "workers", "w", fileload.DefaultWorkers, "parallel Stream Loads (one 2PC txn each)")
	fs.StringVar(&o.Format, "format", "csv", "csv or json (JSON lines); default doris.format of -c when it sets one, else csv")
	fs.Int64Var(&o.ChunkBytes, "chunk-bytes", 0, "chunk size in bytes (0: auto, 1 MiB to 256 MiB)")
	fs.StringVar(&o.Store, "store", "", "store directory (default: under the user cache dir, from the table and the file list)")
	fs.BoolVar(&o.Split, "split", false, "load a load too long for one round in atomic rounds instead of refusing it")
	fs.Int64Var(&o.AssumeMBps, "assume-mbps", fileload.DefaultAssumedRate>>20, "Stream Load MB/s per worker the duration estimate assumes")
	fs.StringVar(&o.Compress, "compress", "", "compress each Stream Load body as it streams: gz or lz4 (default none)")
	fs.StringArrayVarP(&o.Headers, "header", "H", nil, "extra Stream Load header key:value (column_separator, columns, max_filter_ratio, ...)")
	_ = cmd.MarkFlagRequired("table")
	cmdutil.AddConfigFlag(cmd, &o.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmdutil.AddOutputFlag(cmd, &o.Output)
	return cmd
}

// Validate checks the arguments and flags.
func (o *Options) Validate(args []string) error {
	o.Files = args
	if o.Format != "csv" && o.Format != "json" {
		return cmdutil.FlagErrorf("--format %q: want csv or json", o.Format)
	}
	if o.Workers < 1 {
		return cmdutil.FlagErrorf("--workers %d: want at least 1", o.Workers)
	}
	if o.AssumeMBps < 1 {
		return cmdutil.FlagErrorf("--assume-mbps %d: want at least 1", o.AssumeMBps)
	}
	c, err := doris.ParseCompression(o.Compress)
	if err != nil {
		return cmdutil.FlagErrorf("--compress: %v", err)
	}
	o.comp = c
	o.headers = map[string]string{}
	for _, h := range o.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return cmdutil.FlagErrorf("--header %q: want key:value", h)
		}
		o.headers[strings.TrimSpace(k)] = v
	}
	return nil
}

// Complete loads the config and the Doris client and resolves the table.
func (o *Options) Complete() error {
	// Only the doris.* keys are read (a run job's config is accepted as
	// is: its kafka, records and delivery rules are not load's).
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.OnlyDoris)
	if err != nil {
		return err
	}
	o.headers = MergeHeaders(cfg.Doris.Properties, o.headers)
	if cfg.Doris.FormatSet && !o.Cmd.Flags().Changed("format") {
		o.Format = cfg.Doris.Format // doris.format of -c, unless --format overrides it
	}
	db, table, ok := strings.Cut(o.Table, ".")
	if !ok {
		db, table = cfg.Doris.Database, o.Table
	}
	if db == "" || table == "" {
		return cmdutil.FlagErrorf("--table %q: want db.table (or a table and doris.database)", o.Table)
	}
	o.db, o.table = db, table
	c, err := o.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	o.client = c
	if f, ok := o.IO.ErrOut.(*os.File); ok {
		st, err := f.Stat()
		o.ErrIsTTY = err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	return nil
}

// MergeHeaders returns the Stream Load headers of a load: doris.properties
// from the config, then each -H header, which overrides a property of the
// same name (Doris reads header names case-insensitively).
func MergeHeaders(properties, flags map[string]string) map[string]string {
	out := make(map[string]string, len(properties)+len(flags))
	for k, v := range properties {
		out[k] = v
	}
	for k, v := range flags {
		for p := range out {
			if strings.EqualFold(p, k) {
				delete(out, p)
			}
		}
		out[k] = v
	}
	return out
}

// StoreDir returns --store, or the default store of this load under the
// user cache directory.
func (o *Options) StoreDir() (string, error) {
	if o.Store != "" {
		return o.Store, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("default load store: %w (pass --store)", err)
	}
	abs := make([]string, len(o.Files))
	for i, f := range o.Files {
		if abs[i], err = filepath.Abs(f); err != nil {
			return "", fmt.Errorf("input file %s: %w", f, err)
		}
	}
	return filepath.Join(base, "doris-sink", "load", fileload.DefaultStoreName(o.db, o.table, abs)), nil
}

// Run loads the files and prints the summary.
func (o *Options) Run(ctx context.Context) error {
	return o.run(ctx, o.client)
}

func (o *Options) run(ctx context.Context, client fileload.Doris) error {
	store, err := o.StoreDir()
	if err != nil {
		return err
	}
	log := slog.New(doris.RedactingHandler(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})))
	fp, err := failpoints(o.Factory.Environ)
	if err != nil {
		return err
	}
	if fp != nil {
		log.Warn("failpoints armed from "+run.FailpointsEnv, "armed", strings.Join(fp.Armed(), ";"))
		fp.OnCrash(func(name string) {
			log.Error("failpoint crash: exiting without cleanup", "failpoint", name, "code", cmdutil.ExitCrashed)
			exit := o.Exit
			if exit == nil {
				exit = os.Exit
			}
			exit(cmdutil.ExitCrashed)
		})
	}
	prog := &fileload.Progress{}
	stop := func() {}
	if o.ErrIsTTY {
		stop = startProgress(o.IO.ErrOut, prog)
	}
	res, err := fileload.Run(ctx, fileload.Options{
		Client: client, DB: o.db, Table: o.table, Files: o.Files, Format: o.Format, Headers: o.headers,
		Compression: o.comp, Workers: o.Workers, ChunkBytes: o.ChunkBytes, StoreDir: store, Split: o.Split,
		AssumedRate: o.AssumeMBps << 20, Failpoints: fp, Logger: log, Progress: prog,
	})
	stop()
	if err != nil {
		return err
	}
	return o.print(res)
}

// failpoints arms the failpoints named by DORIS_SINK_FAILPOINTS (the
// names of `run`, loader.AllFailpoints).
func failpoints(environ func() []string) (*loader.Failpoints, error) {
	if environ == nil {
		return nil, nil
	}
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, run.FailpointsEnv+"="); ok && strings.TrimSpace(v) != "" {
			fp, err := loader.ParseFailpoints(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", run.FailpointsEnv, err)
			}
			return fp, nil
		}
	}
	return nil, nil
}

// print writes the summary: JSON with -o json or when stdout is not a
// terminal, else key/value lines.
func (o *Options) print(res *fileload.Result) error {
	if o.Output == cmdutil.OutputJSON || !o.IO.IsTTY {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	kv := cmdutil.NewKV(o.IO)
	outcome := "loaded"
	switch {
	case res.AlreadyDone:
		outcome = "already loaded (nothing sent)"
	case res.Resumed:
		outcome = "loaded (resumed)"
	}
	kv.Add("Outcome", outcome)
	kv.Add("Table", res.DB+"."+res.Table)
	kv.Add("Rows", fmt.Sprint(res.Rows))
	if res.FilteredRows > 0 {
		kv.Add("Filtered rows", fmt.Sprint(res.FilteredRows))
	}
	kv.Add("Bytes", fmt.Sprint(res.Bytes))
	kv.Add("Txns", fmt.Sprint(res.Txns))
	kv.Add("Rounds", fmt.Sprint(res.Rounds))
	kv.Add("Seconds", fmt.Sprintf("%.2f", res.Seconds))
	kv.Add("MB/s", fmt.Sprintf("%.1f", res.MBps))
	kv.Add("Store", res.Store)
	return kv.Render()
}
