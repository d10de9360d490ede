package checkpoint

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Targets of `checkpoint rebase --to`.
const (
	RebaseEarliest = "earliest"
	RebaseLatest   = "latest"
	// RebaseOffsets is RebaseResult.To for --offsets.
	RebaseOffsets = "offsets"
)

// RebaseOptions are the inputs of `checkpoint rebase`.
type RebaseOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	// To is RebaseEarliest or RebaseLatest; Offsets is "0=120,1=0".
	// Exactly one of them is set.
	To      string
	Offsets string
	// AllPartitions applies --to to every partition.
	AllPartitions bool
	DryRun        bool
	Yes           bool
}

// RebasePartition is one partition's move.
type RebasePartition struct {
	// Topic is the partition's topic (a job may read several).
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// From is the stored next offset (absent when none was stored).
	From *int64 `json:"from,omitempty"`
	To   int64  `json:"to"`
	// LogStart and LogEnd are the partition's log range when planned.
	LogStart int64 `json:"log_start"`
	LogEnd   int64 `json:"log_end"`
}

// RebaseResult is the output of `checkpoint rebase` (stable names).
type RebaseResult struct {
	Job         string `json:"job"`
	Coordinator string `json:"coordinator"`
	Topic       string `json:"topic"`
	// To is RebaseEarliest, RebaseLatest or RebaseOffsets.
	To string `json:"to"`
	// Checkpoint and Label name the operator's empty, committed decision
	// that carries the new positions (the next free id with --dry-run).
	Checkpoint uint64 `json:"checkpoint"`
	Label      string `json:"label"`
	// From and Target are the stored and the new position.
	From       json.RawMessage   `json:"from,omitempty"`
	Target     json.RawMessage   `json:"target"`
	Partitions []RebasePartition `json:"partitions"`
	By         string            `json:"by"`
	DryRun     bool              `json:"dry_run"`
}

// NewCmdRebase returns `checkpoint rebase`; runF replaces Run in tests.
func NewCmdRebase(f *cmdutil.Factory, runF func(context.Context, *RebaseOptions) error) *cobra.Command {
	opts := &RebaseOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "rebase -c <config> --to earliest|latest | --offsets <partition>=<offset>,...",
		Short: "Move a stopped job's source positions deliberately (out-of-range offsets, a recreated topic)",
		Long: `When the job refuses to start because its stored offsets lie outside the
topic's log (beyond the log end, behind the log start) or because the
source topic was deleted and recreated, decide where it continues and
rebase it:

  --to earliest      from its log start, every partition that needs it (no
                     stored offset, one outside the log, every partition of
                     a recreated topic); --all-partitions: every partition
  --to latest        the same from the log end (skips what is there)
  --offsets 0=120,1=0  the partitions named at those offsets; the others keep
                     their stored offset (which must be inside the log)

Records between the stored and the new offset are skipped (moving forward)
or loaded again (moving back): that is the operator's decision, recorded
as an empty, committed checkpoint with the new positions in the job's
state (the file store, or the Kafka state topic with the consumer group
offsets) and as a ledger entry naming who rebased, from where, to where.

The job must be stopped: with job.coordinator file the store's lock
refuses a running job; with kafka the rebase opens the job's transactional
id, which fences a running process (it stops without deciding anything
more). A decided checkpoint not yet marked committed is looked up in
Doris: VISIBLE under its decided txn, it is marked committed first;
PRECOMMITTED is refused naming "txn commit <txn>"; otherwise start the job
(or checkpoint resolve) first. With kafka a pending checkpoint resolve is
applied by the rebase itself (the job may be refused at start). The job
also stops while running, naming this command, when the topic is
recreated or an offset falls out of the log under it. --dry-run reads
without writing or fencing and prints exactly what would be recorded.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink checkpoint rebase -c orders.yaml --to earliest --dry-run
  $ doris-sink checkpoint rebase -c orders.yaml --offsets 0=120,1=0 --yes`,
		RunE: func(c *cobra.Command, _ []string) error {
			switch {
			case opts.ConfigFile == "":
				return cmdutil.FlagErrorf("-c/--config is required")
			case (opts.To == "") == (opts.Offsets == ""):
				return cmdutil.FlagErrorf("give exactly one of --to earliest|latest and --offsets")
			case opts.To != "" && opts.To != RebaseEarliest && opts.To != RebaseLatest:
				return cmdutil.FlagErrorf("--to must be %s or %s, got %q", RebaseEarliest, RebaseLatest, opts.To)
			}
			if opts.Offsets != "" {
				if _, err := ParseTopicOffsets(opts.Offsets); err != nil {
					return cmdutil.FlagErrorf("--offsets: %v", err)
				}
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunRebase(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmd.Flags().StringVar(&opts.To, "to", "", "earliest or latest")
	cmd.Flags().StringVar(&opts.Offsets, "offsets", "", "explicit next offsets, e.g. 0=120,1=0 (one topic) or orders:0=120,items:0=7")
	cmd.Flags().BoolVar(&opts.AllPartitions, "all-partitions", false, "with --to: move every partition, not only those outside the log")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be recorded; change nothing, fence nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// ParseOffsets parses "0=120,1=0".
func ParseOffsets(s string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for f := range strings.SplitSeq(s, ",") {
		p, o, ok := strings.Cut(strings.TrimSpace(f), "=")
		part, perr := strconv.ParseInt(p, 10, 32)
		off, oerr := strconv.ParseInt(o, 10, 64)
		if !ok || perr != nil || oerr != nil || part < 0 || off < 0 {
			return nil, fmt.Errorf("%q: want <partition>=<offset>, both non-negative integers", f)
		}
		if _, dup := out[int32(part)]; dup {
			return nil, fmt.Errorf("partition %d given twice", part)
		}
		out[int32(part)] = off
	}
	return out, nil
}

// ParseTopicOffsets parses "orders:0=120,items:0=7" (topic:partition=
// offset) and the one-topic "0=120,1=0" (topic ""): topic → partition →
// offset.
func ParseTopicOffsets(s string) (map[string]map[int32]int64, error) {
	byTopic := map[string][]string{}
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		topic, rest, ok := strings.Cut(f, ":")
		if !ok {
			topic, rest = "", f
		} else if topic == "" {
			return nil, fmt.Errorf("%q: want <topic>:<partition>=<offset> with a topic", f)
		}
		byTopic[topic] = append(byTopic[topic], rest)
	}
	out := map[string]map[int32]int64{}
	for topic, fs := range byTopic {
		m, err := ParseOffsets(strings.Join(fs, ","))
		if err != nil {
			if topic != "" {
				return nil, fmt.Errorf("topic %s: %w", topic, err)
			}
			return nil, err
		}
		out[topic] = m
	}
	return out, nil
}

// RunRebase plans the rebase, prints it with --dry-run, and otherwise
// confirms and records it.
func RunRebase(ctx context.Context, o *RebaseOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedRun)
	if err != nil {
		return err
	}
	client, err := o.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	req := RebaseRequest{To: o.To, DryRun: true, Doris: client, AllPartitions: o.AllPartitions}
	if o.Offsets != "" {
		if req.TopicOffsets, err = ParseTopicOffsets(o.Offsets); err != nil {
			return err
		}
	}
	plan, err := Rebase(ctx, cfg, req)
	if err != nil {
		return err
	}
	warnLiveMembers(ctx, o, cfg)
	if o.DryRun {
		return o.print(plan)
	}
	fmt.Fprintf(o.IO.ErrOut, "Warning: records between the stored and the new offsets are skipped (forward) or loaded again (back).\n")
	if cfg.Job.Coordinator == config.CoordinatorKafka {
		fmt.Fprintf(o.IO.ErrOut, "Warning: this opens job %s's transactional id: a running process of the job is fenced and stops.\n", cfg.Job.Name)
	}
	if err := cmdutil.Confirm(o.IO, o.Yes, fmt.Sprintf("rebase job %s to %s", cfg.Job.Name, plan.Target)); err != nil {
		return err
	}
	req.DryRun = false
	res, err := Rebase(ctx, cfg, req)
	if err != nil {
		return err
	}
	return o.print(res)
}

// warnLiveMembers names the live members of the job's consumer group (with
// job.coordinator kafka every copy of the job is one: the owner and its
// standbys). A rebase is for a stopped job: it fences the owner, which
// exits 1; a standby left running takes the slot over on the rebased
// state. So every copy should be stopped first, as reslot warns too.
func warnLiveMembers(ctx context.Context, o *RebaseOptions, cfg *config.Config) {
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		return
	}
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "Warning: the job's consumer group members were not listed (%v): stop every copy of the job first, standbys too.\n", err)
		return
	}
	var ms []string
	for _, m := range jobstate.ReadGroup(ctx, cfg, v).Members {
		ms = append(ms, m.String())
	}
	if len(ms) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "Warning: consumer group %s has live members (%s): stop every copy of the job first, standbys too; "+
			"the rebase fences the one writing, which stops.\n", cfg.Kafka.Group, strings.Join(ms, "; "))
	}
}

func (o *RebaseOptions) print(r *RebaseResult) error {
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, r)
	}
	verb := "Rebased"
	if r.DryRun {
		verb = "Would rebase"
	}
	fmt.Fprintf(o.IO.Out, "%s job %s (%s) to %s as checkpoint %d (%s), empty and committed, by %s\n",
		verb, r.Job, r.Coordinator, r.Target, r.Checkpoint, r.Label, r.By)
	t := cmdutil.NewTable(o.IO, "partition", "from", "to", "log start", "log end")
	several := false
	for _, p := range r.Partitions {
		several = several || p.Topic != r.Partitions[0].Topic
	}
	for _, p := range r.Partitions {
		from := "none"
		if p.From != nil {
			from = strconv.FormatInt(*p.From, 10)
		}
		name := strconv.FormatInt(int64(p.Partition), 10)
		if several {
			name = p.Topic + "/" + name
		}
		t.AddRow(name, from, strconv.FormatInt(p.To, 10),
			strconv.FormatInt(p.LogStart, 10), strconv.FormatInt(p.LogEnd, 10))
	}
	return t.Render()
}

// RebaseRequest is what to rebase to: To (RebaseEarliest, RebaseLatest)
// or Offsets.
type RebaseRequest struct {
	To      string
	Offsets map[int32]int64
	// TopicOffsets are explicit offsets per topic (--offsets
	// topic:partition=offset); topic "" is the job's only topic. Offsets
	// and TopicOffsets add up.
	TopicOffsets map[string]map[int32]int64
	// DryRun reads the state without locking or fencing and writes
	// nothing.
	DryRun bool
	// AllPartitions makes To apply to every partition; without it only
	// the partitions that need it move (no stored offset, one outside the
	// log, or every partition of a recreated topic).
	AllPartitions bool
	// By names the operator (default user@host); Now is the clock
	// (default time.Now).
	By  string
	Now func() time.Time
	// Doris, when set, is asked about a decided checkpoint that the store
	// does not mark committed yet: VISIBLE or COMMITTED under its decided
	// txn id is marked committed (what the job's recovery would do) before
	// the rebase; any other state is refused, naming it.
	Doris loader.ResolveDoris
}

// RebaseRefusedError is a rebase that cannot be recorded as asked.
type RebaseRefusedError struct {
	Job    string
	Reason string
}

// Error names the job and the reason.
func (e *RebaseRefusedError) Error() string { return "rebase job " + e.Job + ": " + e.Reason }

// Rebase moves the source positions of cfg's job: with DryRun it only
// plans, reading the state without lock or fence; otherwise it opens the
// job's store as its writer (file: the lock refuses a running job;
// kafka: InitProducerID fences it), records an empty, committed decision
// carrying the new positions (the Kafka store also commits them to the
// consumer group and records the current topic ID), and appends a ledger
// entry in job.data_dir.
func Rebase(ctx context.Context, cfg *config.Config, req RebaseRequest) (*RebaseResult, error) {
	if req.Now == nil {
		req.Now = time.Now
	}
	if req.By == "" {
		req.By = whoAmI()
	}
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		// Before planning on the stale store (and again under its lock:
		// openForRebase).
		if err := run.CheckNotMigrated(cfg); err != nil {
			return nil, fmt.Errorf("rebase job %s: %w", cfg.Job.Name, err)
		}
	}
	// Plan on a read-only view first (no lock, no fence), so that a rebase
	// that is refused never fences the running job.
	v, err := jobstate.Open(ctx, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &RebaseRefusedError{Job: cfg.Job.Name, Reason: "the job has no state yet (" + err.Error() +
			"): nothing to rebase; set kafka.start for its first start"}
	}
	if err != nil {
		return nil, err
	}
	if n := max(v.SlotCount, cfg.SlotCount()); n > 1 {
		// Each slot's record holds its own partitions' positions; a rebase
		// writes one record. Re-slice to one slot, rebase, re-slice back.
		return nil, &RebaseRefusedError{Job: cfg.Job.Name, Reason: fmt.Sprintf(
			"the job has %d writer slots (group mode) and a rebase rewrites one slot's positions only: stop every member, "+
				"run `doris-sink checkpoint reslot --slots 1 --yes`, rebase with job.slots: 1, then "+
				"`doris-sink checkpoint reslot --slots %d --yes` and start the members with job.slots: %d", n, n, n)}
	}
	recreated, err := topicRecreated(ctx, cfg, v)
	if err != nil {
		return nil, err
	}
	logs := map[string]logBounds{}
	for _, t := range rebaseTopics(cfg, v.State) {
		var b logBounds
		if b.starts, b.ends, err = run.LogRangeOf(ctx, cfg, t); err != nil {
			return nil, fmt.Errorf("rebase job %s: %w", cfg.Job.Name, err)
		}
		logs[t] = b
	}
	st := assumeOperator(v)
	if err := settleDecided(ctx, cfg, st, req); err != nil {
		return nil, err
	}
	res, d, err := planRebase(cfg, st, req, logs, recreated)
	if err != nil || req.DryRun {
		return res, err
	}
	// Then as the job's writer (file: the lock; kafka: the fence), on the
	// state as the store holds it now.
	store, err := openForRebase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if ks, ok := store.(*coordlog.Store); ok {
		// As the job's writer now, apply a pending `checkpoint resolve`
		// first, as its start would (a start refused for its positions
		// never gets to).
		deps := run.Deps{Logger: slog.New(slog.DiscardHandler)}
		if ld, ok := req.Doris.(loader.Doris); ok {
			deps.Doris = ld
		}
		if err := run.ApplyOperator(ctx, ks, cfg, deps); err != nil {
			return nil, fmt.Errorf("rebase job %s: %w", cfg.Job.Name, err)
		}
	}
	if st, err = store.Load(ctx); err != nil {
		return nil, err
	}
	if err := settleDecided(ctx, cfg, st, req); err != nil {
		return nil, err
	}
	if res, d, err = planRebase(cfg, st, req, logs, recreated); err != nil {
		return nil, err
	}
	ann, err := st.Announce(d.DecidedAt)
	if err != nil {
		return nil, err
	}
	if ann.ID != d.ID {
		return nil, fmt.Errorf("rebase job %s: planned checkpoint %d, the store hands out %d", cfg.Job.Name, d.ID, ann.ID)
	}
	st.Decide(d)
	if err := store.Save(ctx, st); err != nil {
		return nil, fmt.Errorf("rebase job %s: record checkpoint %d: %w", cfg.Job.Name, d.ID, err)
	}
	lg, err := ledger.Open(cfg.Job.DataDir)
	if err != nil {
		return res, fmt.Errorf("rebase job %s: recorded in the store, but: %w", cfg.Job.Name, err)
	}
	defer lg.Close()
	e := ledger.Entry{Time: d.DecidedAt, Event: ledger.EventCommitted, Checkpoint: d.ID, Job: cfg.Job.Name, DB: cfg.Doris.Database,
		Table: cfg.Doris.Table, Label: d.Label, DecidedAt: d.DecidedAt, CommittedAt: d.CommittedAt,
		Ranges: ledger.Ranges(d.Start, d.End), Note: fmt.Sprintf("empty checkpoint: operator rebase --to %s by %s (%s)", res.To, req.By, movedText(res))}
	if err := lg.Append(e); err != nil {
		return res, fmt.Errorf("rebase job %s: recorded in the store, but: %w", cfg.Job.Name, err)
	}
	return res, nil
}

// assumeOperator returns the state the plan follows: v's, or, when a
// pending operator record (`checkpoint resolve --assume visible`, Kafka
// coordinator) names the decided checkpoint, the state as the owner
// records it once applied (Rebase applies it before recording). The view
// is not changed.
func assumeOperator(v *jobstate.View) *checkpoint.State {
	st := v.State
	if v.Kafka == nil || !v.Kafka.Pending || v.Kafka.Operator == nil || v.Kafka.Operator.Assumed != checkpoint.ResolvedVisible ||
		st == nil || st.Decided == nil {
		return st
	}
	op := v.Kafka.Operator
	st = st.Clone()
	table := op.Table
	if table == "" {
		table = st.Owner.TableName()
	}
	st.Decided.MarkSubCommitted(st.Owner, table, op.Sub, op.At)
	return st
}

// settleDecided marks a decided, uncommitted checkpoint committed when
// Doris holds its label VISIBLE or COMMITTED under the decided txn id (the
// job's own recovery would, but a job whose positions are refused cannot
// start to do it), so that the rebase can follow it. Anything else is
// left for planRebase to refuse.
func settleDecided(ctx context.Context, cfg *config.Config, st *checkpoint.State, req RebaseRequest) error {
	d := st.Decided
	if d == nil || d.Committed || d.Empty || req.Doris == nil {
		return nil
	}
	state, err := req.Doris.LoadState(ctx, cfg.Doris.Database, d.Label)
	if err != nil {
		return fmt.Errorf("rebase job %s: look up label %s of decided checkpoint %d: %w", cfg.Job.Name, d.Label, d.ID, err)
	}
	if state != doris.TxnVisible && state != doris.TxnCommitted {
		return &RebaseRefusedError{Job: cfg.Job.Name, Reason: fmt.Sprintf(
			"checkpoint %d (label %s, txn %d) is decided and not committed, and Doris holds the label %s: %s", d.ID, d.Label, d.TxnID, state,
			settleAdvice(cfg, state, d.ID, d.TxnID))}
	}
	t, err := req.Doris.TransactionByLabel(ctx, cfg.Doris.Database, d.Label)
	if err != nil {
		return fmt.Errorf("rebase job %s: txn id of label %s (decided txn %d): %w", cfg.Job.Name, d.Label, d.TxnID, err)
	}
	if t.ID != d.TxnID {
		return &RebaseRefusedError{Job: cfg.Job.Name, Reason: fmt.Sprintf(
			"label %s of checkpoint %d is %s under txn %d, the decision names txn %d: a fencing violation (another writer on the label prefix); nothing was changed",
			d.Label, d.ID, state, t.ID, d.TxnID)}
	}
	d.Committed, d.CommittedAt = true, req.Now()
	return nil
}

// settleAdvice says what to do about a decided checkpoint in state before
// a rebase.
func settleAdvice(cfg *config.Config, state doris.TxnStatus, id uint64, txnID int64) string {
	if state == doris.TxnUnknown {
		// Evicted (label_keep_max_second, label_num_threshold) or never
		// reached: the rows may well be in the table.
		return fmt.Sprintf("Doris no longer knows the label (evicted after it finished, or never created), so its rows may or may not be "+
			"in the table; check the table, then record it with `doris-sink checkpoint resolve -c <job config> --checkpoint %d --assume "+
			"visible` (the rows are there: the rebase then follows it) or `--assume aborted` (they are not: start the job so that it "+
			"heals the checkpoint; if its source range is gone, a recreated topic, the rows cannot be replayed: start the job under a "+
			"new job.name)", id)
	}
	if state == doris.TxnPrecommitted {
		return fmt.Sprintf("commit it first (`doris-sink txn commit %d -c <job config> --yes`: the decided txn, what recovery would do; "+
			"starting the job commits it too, unless its positions are refused), or record its outcome with `doris-sink checkpoint "+
			"resolve`; then rebase", txnID)
	}
	return "its rows are not in the table; start the job so that it heals the checkpoint (or `doris-sink checkpoint resolve`) before " +
		"rebasing; if its source range is gone (a recreated topic), the rows cannot be replayed: start the job under a new job.name"
}

// topicRecreated reports, per source topic of the job's Kafka state, whether
// it records another topic ID than the topic has now (file: never known).
func topicRecreated(ctx context.Context, cfg *config.Config, v *jobstate.View) (map[string]bool, error) {
	out := map[string]bool{}
	if v.Kafka == nil {
		return out, nil
	}
	ids := v.Kafka.Source.IDs()
	if len(ids) == 0 {
		return out, nil
	}
	kopts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	for _, topic := range slices.Sorted(maps.Keys(ids)) {
		td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
		if err == nil {
			err = td.Error()
		}
		if errors.Is(err, kerr.UnknownTopicOrPartition) && !slices.Contains(rebaseTopics(cfg, v.State), topic) {
			continue // a removed topic: the rebase drops it
		}
		if err != nil {
			return nil, fmt.Errorf("rebase job %s: topic ID of %s: %w", cfg.Job.Name, topic, err)
		}
		id := td[topic].ID
		out[topic] = hex.EncodeToString(id[:]) != ids[topic]
	}
	return out, nil
}

// logBounds are a topic's log start and end offsets per partition.
type logBounds struct{ starts, ends map[int32]int64 }

// rebaseTopics returns the topics the rebased position names, sorted: the
// configured ones (kafka.topic, kafka.topics), or, with kafka.topic_regex,
// those of the stored position that still match it (a topic it no longer
// selects is dropped: the rebase of a removed topic).
func rebaseTopics(cfg *config.Config, st *checkpoint.State) []string {
	if cfg.Kafka.TopicRegex == "" {
		return slices.Sorted(slices.Values(cfg.Kafka.SourceTopics()))
	}
	re, err := regexp.Compile(`^(?:` + cfg.Kafka.TopicRegex + `)$`)
	if err != nil || st == nil || st.Decided == nil {
		return nil
	}
	pos, ok, err := kafka.ParsePosition(st.Decided.End)
	if err != nil || !ok {
		return nil
	}
	var out []string
	for _, t := range pos.TopicNames() {
		if re.MatchString(t) {
			out = append(out, t)
		}
	}
	return out
}

// openForRebase opens the job's store as its writer.
func openForRebase(ctx context.Context, cfg *config.Config) (checkpoint.Store, error) {
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		s, err := run.OpenFileStore(cfg) // refuses a migrated data dir under the lock
		var me *run.MigratedError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("rebase job %s: %w", cfg.Job.Name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("rebase job %s: %w (stop the job first)", cfg.Job.Name, err)
		}
		return s, nil
	}
	kopts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	s, err := coordlog.OpenStore(ctx, coordlog.StoreConfig{
		Log:   coordlog.Config{Job: cfg.Job.Name, Group: cfg.Kafka.Group, ClientOpts: kopts},
		Owner: run.Owner(cfg), PreviousSources: run.PreviousSources(cfg), Topic: cfg.Kafka.Topic, Topics: cfg.Kafka.Topics, TopicRegex: cfg.Kafka.TopicRegex, Rebase: true})
	if err != nil {
		return nil, fmt.Errorf("rebase job %s: %w", cfg.Job.Name, err)
	}
	return s, nil
}

// planRebase computes the new positions and the decision that records
// them, refusing what cannot be rebased.
func planRebase(cfg *config.Config, st *checkpoint.State, req RebaseRequest, logs map[string]logBounds, recreated map[string]bool) (*RebaseResult, checkpoint.Decision, error) {
	job := cfg.Job.Name
	refuse := func(format string, a ...any) (*RebaseResult, checkpoint.Decision, error) {
		return nil, checkpoint.Decision{}, &RebaseRefusedError{Job: job, Reason: fmt.Sprintf(format, a...)}
	}
	if o := st.Owner; o.Job != job || o.DB != cfg.Doris.Database || o.Table != cfg.Doris.Table {
		return refuse("the store belongs to job %s table %s.%s, not to this config", o.Job, o.DB, o.Table)
	}
	var from json.RawMessage
	if dec := st.Decided; dec != nil {
		if !dec.Committed && !dec.Empty {
			return refuse("checkpoint %d (label %s, txn %d) is decided and not committed: its rows are promised to Doris; "+
				"start the job so that it commits or heals it (or `doris-sink checkpoint resolve`), then rebase", dec.ID, dec.Label, dec.TxnID)
		}
		from = dec.End
	}
	topics := slices.Sorted(maps.Keys(logs))
	if len(topics) == 0 {
		return refuse("no source topic to rebase (kafka.topic_regex matches none of the stored position's topics)")
	}
	storedAll := map[string]map[int32]int64{}
	if pos, ok, err := kafka.ParsePosition(from); err == nil && ok {
		storedAll = pos.PerTopic()
	}
	explicit := map[string]map[int32]int64{}
	for t, m := range req.TopicOffsets {
		explicit[t] = maps.Clone(m)
	}
	if len(req.Offsets) > 0 {
		if explicit[""] == nil {
			explicit[""] = map[int32]int64{}
		}
		maps.Copy(explicit[""], req.Offsets)
	}
	if m, ok := explicit[""]; ok {
		if len(topics) != 1 {
			return refuse("--offsets <partition>=<offset> names no topic and the job reads %s: write <topic>:<partition>=<offset>",
				strings.Join(topics, ","))
		}
		delete(explicit, "")
		if explicit[topics[0]] == nil {
			explicit[topics[0]] = map[int32]int64{}
		}
		maps.Copy(explicit[topics[0]], m)
	}
	for t := range explicit {
		if _, ok := logs[t]; !ok {
			return refuse("--offsets names topic %s, which is not a source topic of the job (%s)", t, strings.Join(topics, ","))
		}
	}
	targets := map[string]map[int32]int64{}
	to := req.To
	moved := 0
	for _, topic := range topics {
		starts, ends, stored := logs[topic].starts, logs[topic].ends, storedAll[topic]
		target := map[int32]int64{}
		targets[topic] = target
		switch req.To {
		case RebaseEarliest, RebaseLatest:
			// Only the partitions that need it move (no stored offset, or one
			// outside the log; every partition of a recreated topic), unless
			// AllPartitions: moving an in-range offset skips or re-reads
			// records that are fine.
			for p := range ends {
				o, ok := stored[p]
				if !req.AllPartitions && !recreated[topic] && ok && o >= starts[p] && o <= ends[p] {
					target[p] = o
					continue
				}
				moved++
				if req.To == RebaseEarliest {
					target[p] = starts[p]
				} else {
					target[p] = ends[p]
				}
			}
		default:
			to = RebaseOffsets
			for p, o := range explicit[topic] {
				if _, ok := ends[p]; !ok {
					return refuse("--offsets names partition %d, topic %s has partitions 0..%d", p, topic, len(ends)-1)
				}
				target[p] = o
			}
			for p := range ends {
				if _, ok := target[p]; ok {
					continue
				}
				o, ok := stored[p]
				if !ok {
					return refuse("partition %d of topic %s has no stored offset: name it in --offsets (log %d..%d)", p, topic, starts[p], ends[p])
				}
				target[p] = o
			}
		}
	}
	if (req.To == RebaseEarliest || req.To == RebaseLatest) && moved == 0 && slices.Equal(slices.Sorted(maps.Keys(storedAll)), topics) {
		return refuse("every stored offset of topic %s is inside its log: nothing to rebase (--all-partitions moves them all to %s, "+
			"which skips or re-reads records)", strings.Join(topics, ","), req.To)
	}
	res := &RebaseResult{Job: job, Coordinator: coordinator(cfg), Topic: strings.Join(topics, ","), To: to, From: from,
		By: req.By, DryRun: req.DryRun, Checkpoint: st.NextID}
	for _, topic := range topics {
		starts, ends, target := logs[topic].starts, logs[topic].ends, targets[topic]
		for _, p := range slices.Sorted(maps.Keys(target)) {
			o := target[p]
			if o < starts[p] || o > ends[p] {
				return refuse("%s/%d offset %d is outside the log %d..%d", topic, p, o, starts[p], ends[p])
			}
			rp := RebasePartition{Topic: topic, Partition: p, To: o, LogStart: starts[p], LogEnd: ends[p]}
			if s, ok := storedAll[topic][p]; ok {
				rp.From = &s
			}
			res.Partitions = append(res.Partitions, rp)
		}
	}
	end, err := kafka.PositionOf(targets).MarshalJSON()
	if err != nil {
		return nil, checkpoint.Decision{}, err
	}
	res.Target = end
	lbl, err := st.Owner.Label(st.NextID)
	if err != nil {
		return nil, checkpoint.Decision{}, err
	}
	res.Label = lbl
	now := req.Now()
	d := checkpoint.Decision{ID: st.NextID, Label: lbl, Start: from, End: end, Empty: true, DecidedAt: now,
		Committed: true, CommittedAt: now, Counts: &checkpoint.LoadCounts{}}
	return res, d, nil
}

// movedText says per partition how many records the rebase skips or
// re-reads.
func movedText(r *RebaseResult) string {
	var parts []string
	several := strings.Contains(r.Topic, ",")
	for _, p := range r.Partitions {
		name := strconv.Itoa(int(p.Partition))
		if several {
			name = p.Topic + "/" + name
		}
		switch {
		case p.From == nil:
			parts = append(parts, fmt.Sprintf("%s: at %d", name, p.To))
		case p.To > *p.From:
			parts = append(parts, fmt.Sprintf("%s: %d→%d skips %d offsets", name, *p.From, p.To, p.To-*p.From))
		case p.To < *p.From:
			parts = append(parts, fmt.Sprintf("%s: %d→%d re-reads %d offsets", name, *p.From, p.To, *p.From-p.To))
		default:
			parts = append(parts, fmt.Sprintf("%s: stays at %d", name, p.To))
		}
	}
	return strings.Join(parts, ", ")
}
