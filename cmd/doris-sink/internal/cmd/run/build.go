package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Deps are what Build needs besides the config.
type Deps struct {
	// Doris is the Doris client (usually cmdutil.Factory.Doris).
	Doris loader.Doris
	// Metrics observes the job; nil: none.
	Metrics *metrics.Metrics
	// Failpoints are armed in the loader; nil: none.
	Failpoints *loader.Failpoints
	// Logger receives the loader's and connector's logs.
	Logger *slog.Logger
	// ConnectorOpts are extra connector options (tests, demo).
	ConnectorOpts []kafka.Opt
	// LoaderKnobs are loader testing hooks; nil: none.
	LoaderKnobs *loader.TestingKnobs
	// FenceCheckInterval is how often a job with job.coordinator kafka asks
	// Kafka whether a newer process fenced it while it has nothing to save
	// (0: kafka.DefaultFenceCheckInterval).
	FenceCheckInterval time.Duration
	// Slot builds the job of one writer slot of a group-mode job
	// (group.go); nil: the standalone job (slot 0 of 1).
	Slot *SlotDeps
}

// SlotDeps are what a group-mode slot job needs besides the config: its
// slot and the membership check of its decisions.
type SlotDeps struct {
	// Index is the slot, in [0, job.slots).
	Index int
	// Stamp checks that this member owns the slot and returns its
	// membership (coordlog.Config.Stamp).
	Stamp func() (coordlog.GroupStamp, error)
}

// Job is one table's loader and connector, built from the config.
type Job struct {
	Loader    *loader.Loader
	Connector *kafka.Connector
	// Table is "db.table".
	Table string
	// Metrics are the connector's counters.
	Metrics *kafka.Metrics
}

// Owner is the checkpoint-store owner of cfg: job, table, source
// "kafka:<topic>" for one topic (kafka.topic, or kafka.topics of one) and
// "kafka" for several topics or kafka.topic_regex (the positions name the
// topics, so the set may grow), writer "0" (standalone).
func Owner(cfg *config.Config) checkpoint.Owner {
	source := "kafka"
	if t, ok := cfg.Kafka.OneTopic(); ok {
		source = "kafka:" + t
	}
	return checkpoint.Owner{Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table,
		Source: source, Writer: "0"}
}

// PreviousSources are the owner sources a store of cfg's job adopts
// (checkpoint.Owner.Adopts): "kafka:<t>" for each topic t of a job reading
// several topics (kafka.topics), so a one-topic job switched to several
// topics that include its topic resumes its store, which then records the
// source "kafka". A store of a topic not in the set stays refused.
func PreviousSources(cfg *config.Config) []string {
	if _, ok := cfg.Kafka.OneTopic(); ok || cfg.Kafka.TopicRegex != "" {
		return nil
	}
	var prev []string
	for _, t := range cfg.Kafka.SourceTopics() {
		prev = append(prev, "kafka:"+t)
	}
	return prev
}

// Build opens the checkpoint store of job.coordinator (file: in
// job.data_dir, refused if another process holds it or it belongs to
// another job; kafka: the job's state topic, fencing the job's previous
// process, see coordinator.go) and builds the loader
// (ledger in the same directory) and the Kafka connector. The connector
// owns the loader, which owns the store: Connector.Run closes them.
// Build is BuildContext with context.Background().
func Build(cfg *config.Config, d Deps) (*Job, error) {
	return BuildContext(context.Background(), cfg, d)
}

// BuildContext is Build whose waits (opening the checkpoint store, the
// slot topic, the offset checks) end when ctx does: run passes the context
// the first signal cancels before loading begins.
func BuildContext(ctx context.Context, cfg *config.Config, d Deps) (*Job, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	table := cfg.Doris.Database + "." + cfg.Doris.Table
	fs, startStore, err := openStore(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	var store checkpoint.Store = fs
	var observed *metrics.ObservedStore
	client := d.Doris
	switch {
	case d.Metrics != nil && d.Slot != nil:
		// Group mode: the slot's series carry its slot label.
		observed = d.Metrics.WrapSlotStore(fs, table, d.Slot.Index)
		store, client = observed, d.Metrics.WrapSlotDoris(client, table, d.Slot.Index)
	case d.Metrics != nil:
		store, client = d.Metrics.WrapStore(fs, table), d.Metrics.WrapDoris(client, table)
	}
	guarantee, err := loader.ParseGuarantee(cfg.Delivery.Guarantee)
	if err != nil {
		fs.Close()
		return nil, err
	}
	props := maps.Clone(cfg.Doris.Properties)
	if props == nil {
		props = map[string]string{}
	}
	maps.Copy(props, kafka.RequiredProperties(cfg.Records.Format))
	maps.Copy(props, kafka.DeleteProperties(deleteConfig(cfg)))
	maps.Copy(props, kafka.EnvelopeProperties(cfg.Records.Envelope))
	ownerProps, _ := cfg.TableSettings(cfg.Doris.Table, props)
	var evidence loader.EvidenceStager
	if es, ok := fs.(loader.EvidenceStager); ok {
		evidence = es // job.coordinator kafka: the evidence topic (coordlog.Store)
	}
	ld, err := loader.New(client, loader.Config{
		Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table,
		Format:     cfg.Doris.Format,
		Properties: ownerProps,
		// A routed table first written gets its tables.<pattern> override.
		TargetFor: func(_, table string) loader.Target {
			p, _ := cfg.TableSettings(table, props)
			return loader.Target{Properties: p}
		},
		Guarantee: guarantee,
		SubLoads:  cfg.Doris.SubLoads,
		// doris.sub_loads: auto starts at SubLoads (1).
		SubLoadsAuto: cfg.Doris.SubLoadsAuto,
		SubLoadsMax:  cfg.Doris.SubLoadsMax,
		BatchMode:    cfg.Delivery.BatchMode,
		Store:        store,
		LedgerDir:    cfg.Job.DataDir,
		Evidence:     evidence,
		Source:       Owner(cfg).Source,
		Scope:        scopeOf(d),
		Failpoints:   d.Failpoints,
		Knobs:        d.LoaderKnobs,
		Logger:       d.Logger,
	})
	if err != nil {
		fs.Close()
		return nil, err
	}
	// From here the loader owns the store (and its ledger): close it.
	kc, err := connectorConfig(cfg)
	if err != nil {
		return nil, errors.Join(err, ld.Close(context.Background()))
	}
	km := &kafka.Metrics{}
	opts := append([]kafka.Opt{kafka.WithLogger(d.Logger), kafka.WithMetrics(km)}, retryOpts(cfg)...)
	opts = append(opts, d.ConnectorOpts...)
	evo, err := evolverOpt(cfg, d.Doris, ld, km, d.Logger)
	if err != nil {
		return nil, errors.Join(err, ld.Close(context.Background()))
	}
	if evo != nil {
		opts = append(opts, evo)
	}
	if cfg.TableDeletes() {
		// Config validation allows tables.<pattern>.delete with routing only.
		opts = append(opts, kafka.WithTableDeletes(func(table string) kafka.DeleteConfig {
			if _, t, ok := strings.Cut(table, "."); ok {
				table = t
			}
			d := cfg.TableDelete(table)
			return kafka.DeleteConfig{Field: d.Field, Value: d.Value, Tombstones: d.Tombstones}
		}))
	}
	if startStore != nil {
		opts = append(opts, kafka.WithStartStore(startStore))
	}
	if sg, ok := startStore.(kafka.DeadLetterStager); ok && cfg.Records.DeadLetterTopic != "" &&
		cfg.Records.DeadLetterDelivery != config.DeadLetterAtLeastOnce {
		opts = append(opts, kafka.WithDeadLetterStager(sg))
	}
	if fc, ok := startStore.(fenceChecker); ok {
		opts = append(opts, kafka.WithFenceCheck(fc.CheckFenced, d.FenceCheckInterval))
	}
	if d.Slot != nil {
		slot, slots := d.Slot.Index, cfg.SlotCount()
		opts = append(opts, kafka.WithPartitionFilter(func(topic string, p int32) bool {
			return coordlog.SlotOf(topic, p, slots) == slot
		}))
	}
	conn, err := kafka.New(kc, ld, opts...)
	if err != nil {
		return nil, errors.Join(err, ld.Close(context.Background()))
	}
	if d.Metrics != nil && d.Slot != nil {
		// Read by the member's one slots collector (no registration per
		// slot job: a rebuilt job never collides); the slot job detaches it (group.go).
		d.Metrics.AttachSlot(d.Slot.Index, km, observed)
	} else if d.Metrics != nil {
		if err := d.Metrics.RegisterConnector(cfg.Kafka.DescribeTopics(), table, km); err != nil {
			return nil, errors.Join(fmt.Errorf("metrics: %w", err), ld.Close(context.Background()))
		}
	}
	return &Job{Loader: ld, Connector: conn, Table: table, Metrics: km}, nil
}

// scopeOf is the label scope of the job Build builds: its slot's in group
// mode, "0" (standalone) otherwise.
func scopeOf(d Deps) string {
	if d.Slot != nil {
		return coordlog.SlotScope(d.Slot.Index)
	}
	return coordlog.DefaultScope
}

// connectorConfig maps the kafka.*, records.* and delivery.* keys.
func connectorConfig(cfg *config.Config) (kafka.Config, error) {
	kc := kafka.Config{
		Brokers:               cfg.Kafka.Brokers,
		Topic:                 cfg.Kafka.Topic,
		Topics:                cfg.Kafka.Topics,
		TopicRegex:            cfg.Kafka.TopicRegex,
		ExcludeTopics:         []string{coordlog.StateTopic(cfg.Job.Name), coordlog.SlotTopic(cfg.Job.Name)},
		Group:                 cfg.Kafka.Group,
		Format:                cfg.Records.Format,
		DeadLetterTopic:       cfg.Records.DeadLetterTopic,
		DeadLetterAtLeastOnce: cfg.Records.DeadLetterDelivery == config.DeadLetterAtLeastOnce,
		DeadLetterCreate:      cfg.Records.DeadLetterCreate,
		DeadLetterBufferBytes: cfg.Records.DeadLetterBufferBytes,
		BisectMaxFailures:     bisectLoads(cfg.Records.DeadLetterMaxBisectLoads),
		Delete:                deleteConfig(cfg),
		Routing: kafka.Routing{TopicTables: cfg.Routing.TopicTables, TableField: cfg.Routing.TableField,
			TableHeader: cfg.Routing.TableHeader, DebeziumTemplate: cfg.Routing.DebeziumTemplate,
			DefaultTable: cfg.Routing.DefaultTable},
		CheckpointInterval: cfg.Delivery.CheckpointInterval,
		CheckpointMaxBytes: int64(cfg.Delivery.CheckpointMaxBytes),
		CheckpointMaxRows:  cfg.Delivery.CheckpointMaxRows,
		Metadata: kafka.MetadataColumns{
			Topic:     cfg.Records.MetadataColumns["topic"],
			Partition: cfg.Records.MetadataColumns["partition"],
			Offset:    cfg.Records.MetadataColumns["offset"],
			Timestamp: cfg.Records.MetadataColumns["timestamp"],
		},
	}
	if kc.CheckpointMaxBytes == 0 {
		kc.CheckpointMaxBytes = -1 // 0 means "no byte cap" in the config
	}
	// The bounds of hostile records (issue 25).
	kc.MaxKeyBytes, kc.MaxHeadersBytes = int(cfg.Records.MaxKeyBytes), int(cfg.Records.MaxHeadersBytes)
	kc.MaxDecompressedBatchBytes = int(cfg.Kafka.MaxDecompressedBatchBytes)
	switch cfg.Kafka.Start.Mode {
	case config.StartExplicit:
		kc.Start, kc.StartOffsets = kafka.StartOffsets, cfg.Kafka.Start.Offsets
	default:
		kc.Start = cfg.Kafka.Start.Mode
	}
	t, err := cmdutil.KafkaTLSConfig(cfg.Kafka.TLS)
	if err != nil {
		return kc, err
	}
	kc.TLS = t
	reg, err := cmdutil.SchemaRegistry(cfg)
	if err != nil {
		return kc, err
	}
	if reg != nil {
		kc.Schemas, kc.Envelope = reg, cfg.Records.Envelope
	}
	if m := cfg.Kafka.SASL.Mechanism; m != "" {
		kc.SASL = kafka.SASL{Mechanism: strings.ToUpper(m), User: cfg.Kafka.SASL.User, Password: cfg.Kafka.SASL.Password.Reveal()}
	}
	return kc, nil
}

// retryOpts maps delivery.fail_fast_after and delivery.retry_backoff_max
// (zero values, from a Config built without Load, keep the connector's
// defaults).
func retryOpts(cfg *config.Config) []kafka.Opt {
	var opts []kafka.Opt
	if cfg.Delivery.RetryBackoffMax > 0 {
		opts = append(opts, kafka.WithRecoverBackoff(kafka.DefaultBackoffMin, cfg.Delivery.RetryBackoffMax))
	}
	if cfg.Delivery.FailFastAfter > 0 || cfg.Delivery.RetryBackoffMax > 0 {
		// A loaded config: 0 means "at the first failure".
		opts = append(opts, kafka.WithFailFastAfter(cfg.Delivery.FailFastAfter))
	}
	return opts
}

// bisectLoads maps records.dead_letter_max_bisect_loads (0: off, also in
// a Config built without Load) to kafka.Config.BisectMaxFailures
// (negative: off).
func bisectLoads(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
