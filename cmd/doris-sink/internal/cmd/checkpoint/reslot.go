package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ReslotOptions are the inputs of `checkpoint reslot`.
type ReslotOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	Slots      int
	Yes        bool
}

// NewCmdReslot returns `checkpoint reslot`; runF replaces Run in tests.
func NewCmdReslot(f *cmdutil.Factory, runF func(context.Context, *ReslotOptions) error) *cobra.Command {
	opts := &ReslotOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "reslot -c <config> --slots N [--yes]",
		Short: "Change a stopped group-mode job's writer slot count (job.slots), moving every partition's position",
		Long: `Re-slice a job's decisions from its recorded slot count S (1 for a
standalone job) to N writer slots: partition p of topic t belongs to slot
SlotOf(t, p, N), so a new count moves partitions between slot records.
New slot j records, as an empty committed checkpoint, the positions of its
partitions taken from the old slot that owned each; its checkpoint ids
continue after the highest id of any old slot, so no label repeats one of
any scope. Old scopes ≥ N are rewritten as retired. All records are written
in ONE Kafka transaction; then the slot topic gets N partitions (raised,
or deleted and recreated when shrinking; deleted for N = 1).

Refused unless every slot's last decision is committed and no announced
label of an undecided checkpoint is open (PREPARE/PRECOMMITTED) or
committed in Doris. Stop every member first: --yes opens every slot's
transactional id, which fences a live member. Then set job.slots to N in
the job config and start the members. Without --yes it prints the plan and
changes nothing. A run interrupted after the transaction completes when
run again.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink checkpoint reslot -c orders.yaml --slots 4
  $ doris-sink checkpoint reslot -c orders.yaml --slots 4 --yes -o json`,
		RunE: func(c *cobra.Command, _ []string) error {
			switch {
			case opts.ConfigFile == "":
				return cmdutil.FlagErrorf("-c/--config is required")
			case opts.Slots < 1:
				return cmdutil.FlagErrorf("--slots N is required, N ≥ 1")
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunReslot(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmd.Flags().IntVar(&opts.Slots, "slots", 0, "the new writer slot count (job.slots)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "write the plan (without it: print the plan, change nothing)")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunReslot plans the reslot and, with --yes, does it.
func RunReslot(ctx context.Context, o *ReslotOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedRun)
	if err != nil {
		return err
	}
	client, err := o.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	if o.Yes {
		fmt.Fprintf(o.IO.ErrOut, "Warning: this opens every writer slot's transactional id of job %s: a running member is fenced and stops.\n", cfg.Job.Name)
	}
	res, err := Reslot(ctx, cfg, ReslotRequest{Slots: o.Slots, DryRun: !o.Yes, Doris: client})
	if err != nil {
		return err
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	return printReslot(o.IO, res)
}

// Reslot re-slices cfg's job to req.Slots writer slots (see NewCmdReslot):
// it plans on a read-only view; unless DryRun it then fences every writer
// scope (InitProducerID of each slot's transactional id), plans again on
// the state as it is after the fence, writes every new record in one
// transaction, checks that nothing overwrote them, appends a ledger entry
// in job.data_dir and sets the slot topic's partition count. When the
// records already hold req.Slots (a rerun after a crash between the
// transaction and the topic change) only the slot topic is changed.
func Reslot(ctx context.Context, cfg *config.Config, req ReslotRequest) (*ReslotResult, error) {
	job := cfg.Job.Name
	if req.Now == nil {
		req.Now = time.Now
	}
	if req.By == "" {
		req.By = whoAmI()
	}
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		return nil, &ReslotRefusedError{Job: job, Reason: "job.coordinator is " + coordinator(cfg) +
			": writer slots exist only with job.coordinator kafka"}
	}
	if req.Slots < 1 {
		return nil, &ReslotRefusedError{Job: job, Reason: fmt.Sprintf("--slots %d: want N ≥ 1", req.Slots)}
	}
	kopts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	v, err := jobstate.Open(ctx, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ReslotRefusedError{Job: job, Reason: "the job has no state yet (" + err.Error() +
			"): set job.slots and start it; there is nothing to re-slice"}
	}
	if err != nil {
		return nil, err
	}
	if done(v, req.Slots) {
		return finishSlotTopic(ctx, cfg, kopts, v, req)
	}
	if err := checkReslotable(ctx, cfg, v, req.Doris); err != nil {
		return nil, err
	}
	res, _, err := planReslot(cfg, v, req)
	if err != nil {
		return nil, err
	}
	if res.SlotTopicPartitions, err = slotTopicPartitions(ctx, kopts, res.SlotTopic); err != nil {
		return nil, err
	}
	res.SlotTopicAction = slotTopicAction(res.SlotTopicPartitions, req.Slots)
	if res.LiveMembers = jobstate.ReadGroup(ctx, cfg, v).Members; res.LiveMembers == nil {
		res.LiveMembers = []jobstate.Member{}
	}
	if req.DryRun {
		return res, nil
	}

	// Fence every writer scope the reslot rewrites or creates, and keep
	// the fences (the producer epochs) until the records are written.
	scopes := map[string]bool{}
	for _, s := range v.Slots {
		scopes[s.Scope] = true
	}
	for j := range req.Slots {
		scopes[coordlog.SlotScope(j)] = true
	}
	for _, scope := range slices.Sorted(maps.Keys(scopes)) {
		l, err := coordlog.Open(ctx, coordlog.Config{Job: job, Scope: scope, ClientOpts: kopts})
		if err != nil {
			return nil, fmt.Errorf("reslot job %s: fence writer scope %s (transactional id %s): %w", job, scope,
				coordlog.TransactionalID(job, scope), err)
		}
		defer l.Close()
	}
	if v, err = jobstate.Open(ctx, cfg); err != nil { // the state as the fence left it
		return nil, fmt.Errorf("reslot job %s: read the state after fencing: %w", job, err)
	}
	if done(v, req.Slots) {
		return finishSlotTopic(ctx, cfg, kopts, v, req)
	}
	if err := checkReslotable(ctx, cfg, v, req.Doris); err != nil {
		return nil, err
	}
	res, recs, err := planReslot(cfg, v, req)
	if err != nil {
		return nil, err
	}
	offs, err := coordlog.WriteReslot(ctx, coordlog.Config{Job: job, ClientOpts: kopts}, req.Slots, v.Kafka.End, recs)
	if err != nil {
		return nil, fmt.Errorf("reslot job %s: %w", job, err)
	}
	res.StateOffsets = offs
	if err := checkNotOverwritten(ctx, cfg, offs); err != nil {
		return res, err
	}
	if err := appendReslotLedger(cfg, res, req); err != nil {
		return res, err
	}
	if req.AfterWrite != nil {
		if err := req.AfterWrite(); err != nil {
			return res, err
		}
	}
	if res.SlotTopicPartitions, err = slotTopicPartitions(ctx, kopts, res.SlotTopic); err != nil {
		return res, err
	}
	res.SlotTopicAction = slotTopicAction(res.SlotTopicPartitions, req.Slots)
	if err := setSlotTopic(ctx, kopts, res.SlotTopic, res.SlotTopicPartitions, req.Slots); err != nil {
		return res, fmt.Errorf("reslot job %s: the new records are written (offsets %v), but: %w; run the reslot again to finish",
			job, offs, err)
	}
	return res, nil
}

// done reports whether every state record of v already holds slots (a
// reslot that wrote its transaction, or a job already at that count).
func done(v *jobstate.View, slots int) bool {
	for _, s := range v.Slots {
		if s.Slots != slots {
			return false
		}
	}
	return len(v.Slots) > 0
}

// finishSlotTopic completes a reslot whose records hold req.Slots: only
// the slot topic's partition count is set (nothing is fenced).
func finishSlotTopic(ctx context.Context, cfg *config.Config, kopts []kgo.Opt, v *jobstate.View, req ReslotRequest) (*ReslotResult, error) {
	res := &ReslotResult{Job: cfg.Job.Name, StateTopic: coordlog.StateTopic(cfg.Job.Name), FromSlots: req.Slots, ToSlots: req.Slots,
		Slots: []ReslotSlot{}, Retired: []string{}, SlotTopic: coordlog.SlotTopic(cfg.Job.Name), By: req.By, DryRun: req.DryRun,
		LiveMembers: []jobstate.Member{}}
	n, err := slotTopicPartitions(ctx, kopts, res.SlotTopic)
	if err != nil {
		return nil, err
	}
	res.SlotTopicPartitions, res.SlotTopicAction = n, slotTopicAction(n, req.Slots)
	if req.DryRun || res.SlotTopicAction == SlotTopicNone {
		return res, nil
	}
	if err := setSlotTopic(ctx, kopts, res.SlotTopic, n, req.Slots); err != nil {
		return res, fmt.Errorf("reslot job %s: %w; run the reslot again", cfg.Job.Name, err)
	}
	return res, nil
}

// checkNotOverwritten re-reads the state topic and fails when a written
// scope's latest record is not the reslot's: a member started during the
// reslot and wrote after it.
func checkNotOverwritten(ctx context.Context, cfg *config.Config, offs map[string]int64) error {
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("reslot job %s: the records are written, but re-reading them: %w", cfg.Job.Name, err)
	}
	for _, scope := range slices.Sorted(maps.Keys(offs)) {
		var got *jobstate.Slot
		for i := range v.Slots {
			if v.Slots[i].Scope == scope {
				got = &v.Slots[i]
			}
		}
		if got == nil || got.Offset != offs[scope] {
			at := "none"
			if got != nil {
				at = fmt.Sprintf("offset %d by incarnation %s", got.Offset, got.Incarnation)
			}
			return fmt.Errorf("reslot job %s: writer scope %s's reslot record (offset %d) was superseded (latest: %s): a member "+
				"of the job ran during the reslot; stop every member, check `doris-sink checkpoint show`, and run the reslot again",
				cfg.Job.Name, scope, offs[scope], at)
		}
	}
	return nil
}

// appendReslotLedger records the operator decision in job.data_dir's
// ledger.
func appendReslotLedger(cfg *config.Config, res *ReslotResult, req ReslotRequest) error {
	lg, err := ledger.Open(cfg.Job.DataDir)
	if err != nil {
		return fmt.Errorf("reslot job %s: recorded in Kafka, but the ledger: %w", cfg.Job.Name, err)
	}
	defer lg.Close()
	e := ledger.Entry{Time: req.Now(), Event: ledger.EventResliced, Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table,
		Note: fmt.Sprintf("operator reslot %d → %d slots by %s: %s", res.FromSlots, res.ToSlots, req.By, reslotSummary(res))}
	if err := lg.Append(e); err != nil {
		return fmt.Errorf("reslot job %s: recorded in Kafka, but the ledger: %w", cfg.Job.Name, err)
	}
	return nil
}

func printReslot(io *cmdutil.IOStreams, r *ReslotResult) error {
	verb := "Re-sliced"
	if r.DryRun {
		verb = "Would re-slice (dry run: add --yes to write)"
	}
	fmt.Fprintf(io.Out, "%s job %s from %d to %d writer slot(s) in %s, by %s\n", verb, r.Job, r.FromSlots, r.ToSlots, r.StateTopic, r.By)
	if len(r.Slots) > 0 {
		t := cmdutil.NewTable(io, "slot", "checkpoint", "label", "next id", "partitions (next offset ← old slot)")
		for _, s := range r.Slots {
			var ps []string
			for _, p := range s.Partitions {
				ps = append(ps, fmt.Sprintf("%s/%d@%d←%s", p.Topic, p.Partition, p.Next, p.FromScope))
			}
			cp := "-"
			if s.Checkpoint != 0 {
				cp = strconv.FormatUint(s.Checkpoint, 10)
			}
			t.AddRow(s.Scope, cp, s.Label, strconv.FormatUint(s.NextID, 10), strings.Join(ps, " "))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Retired) > 0 {
		fmt.Fprintf(io.Out, "Retired writer scopes (never resumed): %s\n", strings.Join(r.Retired, ", "))
	}
	fmt.Fprintf(io.Out, "Slot topic %s: %s\n", r.SlotTopic, slotTopicText(r))
	if len(r.LiveMembers) > 0 {
		var ms []string
		for _, m := range r.LiveMembers {
			ms = append(ms, m.String())
		}
		fmt.Fprintf(io.ErrOut, "Warning: consumer group members are live (%s): --yes fences them and they stop; stop every member first.\n",
			strings.Join(ms, "; "))
	}
	if !r.DryRun {
		fmt.Fprintf(io.Out, "Next: set job.slots: %d in the job config and start the members.\n", r.ToSlots)
	}
	return nil
}
