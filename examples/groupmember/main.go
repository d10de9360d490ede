// Command groupmember is a Go service that runs as one member of a
// doris-sink job's consumer group (package loader/kafka/group), with its
// own record handling: every row it loads carries the record's source
// partition and offset in columns of its own (kafka.MetadataColumns), and
// it logs each checkpoint of each slot it owns (kafka.WithOnCheckpoint).
// Start several copies with the same -job and -slots: the group shares
// the slots among them, one beyond -slots is a hot standby, and a copy
// that stops hands its slots over after draining them. It can share a job
// with `doris-sink run` members of the same job, group and table as long
// as they write the same rows.
//
//	groupmember -brokers localhost:9092 -topic orders -job orders \
//	    -slots 2 -fe http://localhost:8030 -db demo -table orders -data-dir ./data-a
//
// The first SIGTERM or SIGINT drains every slot and leaves the group (exit
// 0); a second one aborts (the open checkpoints stay undecided: the slots'
// next owners abort them and re-read those records). Every flag can be
// set in the environment instead: GROUPMEMBER_<FLAG>, upper case, dashes
// as underscores (GROUPMEMBER_DATA_DIR).
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
)

func main() {
	cfg, err := parseFlags(flag.CommandLine, os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupmember:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	m, err := newService(cfg, log).member()
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupmember:", err)
		os.Exit(2)
	}
	go func() {
		<-sigs
		log.Warn("signal: draining every slot, then leaving the group (a second signal aborts)")
		m.Drain()
		<-sigs
		log.Warn("second signal: aborting")
		cancel()
	}()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "groupmember:", err)
		os.Exit(1)
	}
	log.Info("member stopped: every slot it ran drained")
}

// config is the service's configuration (flags or environment).
type config struct {
	Brokers    []string
	Topic      string
	Job        string
	Group      string
	Slots      int
	InstanceID string
	FE         []string
	User       string
	Password   string
	DB, Table  string
	DataDir    string
	// PartitionColumn and OffsetColumn receive each row's source
	// partition and offset ("": not loaded).
	PartitionColumn, OffsetColumn string
	// CheckpointInterval and CheckpointMaxRows bound each checkpoint.
	CheckpointInterval time.Duration
	CheckpointMaxRows  int64
	// SessionTimeout and RebalanceTimeout are the group's timeouts (0:
	// franz-go's defaults).
	SessionTimeout, RebalanceTimeout time.Duration
	// MemberOpts are extra options of the membership client (the test:
	// short heartbeats).
	MemberOpts []kgo.Opt
	// OnCheckpoint, if set, is called after each slot's checkpoint
	// attempt, after the service logged it (the test waits on it).
	OnCheckpoint func(slot int, st kafka.CheckpointStats)
	// OnSlots, if set, is called after the member took or handed over
	// slots (the test waits on it).
	OnSlots func()
}

// parseFlags reads the configuration from args, each flag defaulting to
// its GROUPMEMBER_ environment variable.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	env := func(name, def string) string {
		return cmp.Or(getenv("GROUPMEMBER_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))), def)
	}
	var c config
	var brokers, fe string
	fs.StringVar(&brokers, "brokers", env("brokers", "localhost:9092"), "Kafka seed brokers, comma-separated")
	fs.StringVar(&c.Topic, "topic", env("topic", ""), "source topic (required)")
	fs.StringVar(&c.Job, "job", env("job", ""), "doris-sink job name: names the state and slot topics (required)")
	fs.StringVar(&c.Group, "group", env("group", ""), "the job's consumer group (default doris-sink-<job>, as doris-sink run)")
	slots := env("slots", "1")
	fs.Func("slots", "the job's writer slots (default 1)", func(s string) error { slots = s; return nil })
	fs.StringVar(&c.InstanceID, "instance", env("instance", ""), "static member id (default: kept in <data-dir>/instance-id)")
	fs.StringVar(&fe, "fe", env("fe", "http://localhost:8030"), "Doris FE HTTP addresses, comma-separated")
	fs.StringVar(&c.User, "user", env("user", "root"), "Doris user")
	fs.StringVar(&c.Password, "password", env("password", ""), "Doris password")
	fs.StringVar(&c.DB, "db", env("db", ""), "Doris database (required)")
	fs.StringVar(&c.Table, "table", env("table", ""), "Doris table (required)")
	fs.StringVar(&c.DataDir, "data-dir", env("data-dir", ""), "local directory: instance id and slot ledgers (required)")
	fs.StringVar(&c.PartitionColumn, "partition-column", env("partition-column", "src_partition"), "column of each row's source partition (\"\": none)")
	fs.StringVar(&c.OffsetColumn, "offset-column", env("offset-column", "src_offset"), "column of each row's source offset (\"\": none)")
	interval := env("checkpoint-interval", "5s")
	fs.Func("checkpoint-interval", "time between checkpoints (default 5s)", func(s string) error { interval = s; return nil })
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.Brokers, c.FE = strings.Split(brokers, ","), strings.Split(fe, ",")
	c.Group = cmp.Or(c.Group, "doris-sink-"+c.Job)
	var err error
	if _, err = fmt.Sscan(slots, &c.Slots); err != nil || c.Slots < 1 {
		return c, fmt.Errorf("-slots %q: want a positive integer", slots)
	}
	if c.CheckpointInterval, err = time.ParseDuration(interval); err != nil {
		return c, fmt.Errorf("-checkpoint-interval: %w", err)
	}
	for name, v := range map[string]string{"topic": c.Topic, "job": c.Job, "db": c.DB, "table": c.Table, "data-dir": c.DataDir} {
		if v == "" {
			return c, fmt.Errorf("-%s is required", name)
		}
	}
	return c, nil
}

// service builds the member of cfg and its slot jobs.
type service struct {
	cfg config
	log *slog.Logger
}

func newService(cfg config, log *slog.Logger) *service { return &service{cfg: cfg, log: log} }

// kafkaConfig is the slot connectors' source.
func (s *service) kafkaConfig() kafka.Config {
	c := s.cfg
	return kafka.Config{
		Brokers: c.Brokers, Topic: c.Topic, Group: c.Group,
		// The job's own topics are never read as a source.
		ExcludeTopics:      []string{coordlog.StateTopic(c.Job), coordlog.SlotTopic(c.Job)},
		CheckpointInterval: c.CheckpointInterval, CheckpointMaxRows: c.CheckpointMaxRows, CheckpointMaxBytes: -1,
		Metadata: kafka.MetadataColumns{Partition: c.PartitionColumn, Offset: c.OffsetColumn},
	}
}

// member returns the group member of the service. Its instance id is
// -instance, or one kept in <data-dir>/instance-id (created on first
// use), so that a restart rejoins as the same static member.
func (s *service) member() (*group.Member, error) {
	c := s.cfg
	id, leave := c.InstanceID, false
	if id == "" {
		var err error
		if id, err = keptInstanceID(c.DataDir); err != nil {
			return nil, err
		}
		leave = true // an id of this data dir: stopping by choice hands the slots over at once
	}
	return group.New(group.Config{
		Job: c.Job, Group: c.Group, Slots: c.Slots, InstanceID: id, LeaveOnStop: leave,
		SessionTimeout: c.SessionTimeout, RebalanceTimeout: c.RebalanceTimeout,
		ClientOpts: kafka.ClientOpts(s.kafkaConfig()), MemberOpts: c.MemberOpts, Logger: s.log,
		NewSlotJob: s.newSlotJob,
		Hooks: group.Hooks{
			Assigned: func(slots []int) { s.log.Info("slots assigned", "slots", slots); s.onSlots() },
			Revoked:  func(slots []int) { s.log.Info("slots handed over", "slots", slots); s.onSlots() },
		},
	})
}

// onSlots calls config.OnSlots.
func (s *service) onSlots() {
	if s.cfg.OnSlots != nil {
		s.cfg.OnSlots()
	}
}

// newSlotJob builds the job of one slot: a coordinator log of the slot's
// scope stamped with the member's generation, a loader over it, and a
// connector reading only the slot's partitions.
func (s *service) newSlotJob(ctx context.Context, slot group.Slot) (group.SlotJob, error) {
	c := s.cfg
	kc := s.kafkaConfig()
	owner := checkpoint.Owner{Job: c.Job, DB: c.DB, Table: c.Table, Source: "kafka:" + c.Topic, Writer: slot.Scope}
	st, err := coordlog.OpenStore(ctx, coordlog.StoreConfig{
		Log:   coordlog.Config{Job: c.Job, Group: c.Group, ClientOpts: kafka.ClientOpts(kc), Logger: slot.Logger, Stamp: slot.Stamp},
		Owner: owner, Topic: c.Topic, Slots: slot.Slots,
	})
	if err != nil {
		return nil, fmt.Errorf("slot %d: coordinator log: %w", slot.Index, err)
	}
	client, err := doris.NewClient(doris.Config{FE: c.FE, User: c.User, Password: c.Password, Logger: slot.Logger})
	if err != nil {
		st.Close()
		return nil, err
	}
	ld, err := loader.New(client, loader.Config{Job: c.Job, DB: c.DB, Table: c.Table, Source: owner.Source,
		Scope: slot.Scope, Store: st, Evidence: st, LedgerDir: group.SlotDataDir(c.DataDir, slot.Index, slot.Slots),
		Logger: slot.Logger})
	if err != nil {
		st.Close()
		client.Close()
		return nil, err
	}
	conn, err := kafka.New(kc, ld,
		kafka.WithLogger(slot.Logger),
		kafka.WithStartStore(st),
		kafka.WithFenceCheck(st.CheckFenced, 0),
		kafka.WithPartitionFilter(func(topic string, p int32) bool {
			return coordlog.SlotOf(topic, p, slot.Slots) == slot.Index
		}),
		kafka.WithOnCheckpoint(func(cs kafka.CheckpointStats) {
			if cs.Err != nil {
				slot.Logger.Warn("checkpoint failed", "err", cs.Err)
			} else {
				slot.Logger.Info("checkpoint decided", "rows", cs.Rows, "end", cs.End.String())
			}
			if c.OnCheckpoint != nil {
				c.OnCheckpoint(slot.Index, cs)
			}
		}))
	if err != nil {
		return nil, errors.Join(err, ld.Close(context.Background()), client.Close())
	}
	return &slotJob{Connector: conn, client: client}, nil
}

// slotJob is a slot's connector; its Doris client closes with it.
type slotJob struct {
	*kafka.Connector
	client *doris.Client
}

// Run runs the connector (which closes its loader and store), then the
// Doris client.
func (j *slotJob) Run(ctx context.Context) error {
	err := j.Connector.Run(ctx)
	return errors.Join(err, j.client.Close())
}

// keptInstanceID returns the instance id kept in dir/instance-id, creating
// a random one on first use.
func keptInstanceID(dir string) (string, error) {
	path := filepath.Join(dir, "instance-id")
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
		return "", fmt.Errorf("instance id file %s is empty: delete it (a new id joins as a new member) or pass -instance", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := "groupmember-" + hex.EncodeToString(b)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return id, nil
}

// newFlagSet is a fresh flag set of the command (tests).
func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("groupmember", flag.ContinueOnError) }
