package group_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
)

// A member of job "orders" (two slots) over kfake and the Doris emulator:
// alone in its group it owns both slots, runs one slot job per slot, and
// drains them when asked. Every slot job is a coordinator log of the
// slot's scope stamped by the member (Slot.Stamp), a loader over it and a
// connector reading the slot's partitions only.
func Example() {
	ctx := context.Background()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "orders"))
	if err != nil {
		log.Fatal(err)
	}
	defer kc.Close()
	stopKeep, err := kafkatest.KeepParkedMembers(kc, 50*time.Millisecond) // Kafka's rule kfake lacks
	if err != nil {
		log.Fatal(err)
	}
	defer stopKeep()
	srv, err := doristest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.CreateDatabase("demo"); err != nil {
		log.Fatal(err)
	}
	if err := srv.CreateTable("demo", "CREATE TABLE orders (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		log.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		log.Fatal(err)
	}
	defer prod.Close()
	for i := range 20 {
		prod.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i)}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	const job, consumerGroup, slots = "orders", "doris-sink-orders", 2
	source := kafka.Config{Brokers: kc.ListenAddrs(), Topic: "orders", Group: consumerGroup,
		ExcludeTopics: []string{coordlog.StateTopic(job), coordlog.SlotTopic(job)}, CheckpointInterval: 100 * time.Millisecond}
	var rows atomic.Int64             // rows of the decided checkpoints
	decided := make(chan struct{}, 1) // wakes the wait below
	dataDir, cleanup := tempDir()
	defer cleanup()

	m, err := group.New(group.Config{
		Job: job, Group: consumerGroup, Slots: slots, InstanceID: "example-member-1", LeaveOnStop: true,
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 5 * time.Second,
		ClientOpts: kafka.ClientOpts(source),
		NewSlotJob: func(ctx context.Context, s group.Slot) (group.SlotJob, error) {
			owner := checkpoint.Owner{Job: job, DB: "demo", Table: "orders", Source: "kafka:orders", Writer: s.Scope}
			st, err := coordlog.OpenStore(ctx, coordlog.StoreConfig{
				Log:   coordlog.Config{Job: job, Group: consumerGroup, ClientOpts: kafka.ClientOpts(source), Stamp: s.Stamp},
				Owner: owner, Topic: "orders", Slots: s.Slots})
			if err != nil {
				return nil, err
			}
			ld, err := loader.New(client, loader.Config{Job: job, DB: "demo", Table: "orders", Source: owner.Source,
				Scope: s.Scope, Store: st, Evidence: st, LedgerDir: group.SlotDataDir(dataDir, s.Index, s.Slots)})
			if err != nil {
				st.Close()
				return nil, err
			}
			// The connector owns the loader and the store: Run closes them.
			return kafka.New(source, ld, kafka.WithStartStore(st), kafka.WithFenceCheck(st.CheckFenced, 0),
				kafka.WithPartitionFilter(func(t string, p int32) bool { return coordlog.SlotOf(t, p, s.Slots) == s.Index }),
				kafka.WithOnCheckpoint(func(cs kafka.CheckpointStats) {
					if cs.Err == nil {
						rows.Add(cs.Rows)
						select {
						case decided <- struct{}{}:
						default:
						}
					}
				}))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	for rows.Load() < 20 {
		<-decided
	}
	m.Drain() // drain both slots, then leave the group
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	loaded, err := srv.Rows("demo", "orders")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows decided:", rows.Load(), "rows in the table:", len(loaded))
	// Output: rows decided: 20 rows in the table: 20
}

// tempDir returns a fresh directory and its removal.
func tempDir() (string, func()) {
	d, err := os.MkdirTemp("", "group-example-")
	if err != nil {
		log.Fatal(err)
	}
	return d, func() { os.RemoveAll(d) }
}
