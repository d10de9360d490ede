package chaos

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
)

// Names of the campaign's Kafka topics and Doris objects.
const (
	Topic           = "events"
	DeadLetterTopic = "events-dlq"
	Database        = "chaos"
	// EventsTable is a DUPLICATE KEY table: one row per loaded event, so
	// lost and duplicated events are counted exactly.
	EventsTable = "events"
	// StateTable is a UNIQUE KEY table with sequence column ver: one row per
	// key, which must carry the key's highest produced version.
	StateTable = "state"
	partitions = 2
)

// Table DDL (docs/doris-facts.md §7 table models; the sequence column follows
// function_column.sequence_col).
const (
	eventsDDL = "CREATE TABLE events (eid BIGINT, k BIGINT, ver BIGINT, payload VARCHAR(64), sum BIGINT) " +
		"DUPLICATE KEY(eid) DISTRIBUTED BY HASH(eid) BUCKETS 1"
	stateDDL = "CREATE TABLE state (k BIGINT, ver BIGINT, eid BIGINT, payload VARCHAR(64), sum BIGINT) " +
		"UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 " +
		`PROPERTIES ("function_column.sequence_col" = "ver", "enable_unique_key_merge_on_write" = "true")`
)

// Cluster is "the cluster" of a campaign: a kfake Kafka that can be
// restarted on the same port with the same data directory, and a Doris
// emulator. The sinks are separate processes. Close stops both.
type Cluster struct {
	Doris *doristest.Server

	mu      sync.Mutex
	kafka   *kfake.Cluster
	port    int
	dataDir string
	// opts are the broker options every (re)start applies.
	opts []kfake.Opt
	// stopKeep ends the kafka broker's kafkatest.KeepParkedMembers.
	stopKeep func()
}

// ClusterOptions shape a campaign's cluster; the zero value is
// NewCluster's.
type ClusterOptions struct {
	// Partitions of Topic and DeadLetterTopic (default 2).
	Partitions int
	// MinSessionTimeout is the broker's group.min.session.timeout.ms
	// (kfake default 6 s): group-mode campaigns run members with a shorter
	// kafka.session_timeout so that a killed or paused member's slots move
	// within seconds.
	MinSessionTimeout time.Duration
}

// NewCluster starts Kafka (topics Topic and DeadLetterTopic, 2
// partitions, persisted in kafkaDir) and Doris (database with both
// tables). Call Close when done.
func NewCluster(kafkaDir string) (*Cluster, error) {
	return NewClusterWith(kafkaDir, ClusterOptions{})
}

// NewClusterWith is NewCluster shaped by o.
func NewClusterWith(kafkaDir string, o ClusterOptions) (*Cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var opts []kfake.Opt
	if o.MinSessionTimeout > 0 {
		opts = append(opts, kfake.GroupMinSessionTimeout(o.MinSessionTimeout))
	}
	nparts := o.Partitions
	if nparts <= 0 {
		nparts = partitions
	}
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.Ports(port), kfake.DataDir(kafkaDir),
		kfake.SeedTopics(int32(nparts), Topic, DeadLetterTopic)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("start kafka: %w", err)
	}
	srv, err := doristest.NewServer(doristest.SeedDatabases(Database))
	if err != nil {
		kc.Close()
		return nil, fmt.Errorf("start doris: %w", err)
	}
	c := &Cluster{Doris: srv, kafka: kc, port: port, dataDir: kafkaDir, opts: opts, stopKeep: func() {}}
	if c.stopKeep, err = keepParked(kc); err != nil {
		c.Close()
		return nil, err
	}
	for _, ddl := range []string{eventsDDL, stateDDL} {
		if err := srv.CreateTable(Database, ddl); err != nil {
			c.Close()
			return nil, fmt.Errorf("create table: %w", err)
		}
	}
	return c, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Brokers is the Kafka seed address (stable across RestartKafka).
func (c *Cluster) Brokers() string { return "127.0.0.1:" + strconv.Itoa(c.port) }

// RestartKafka closes the broker (it persists its data) and starts it
// again on the same port from the same data directory, like a broker
// restart. Clients see their connections drop and reconnect.
func (c *Cluster) RestartKafka() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeep()
	c.kafka.Close()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.Ports(c.port), kfake.DataDir(c.dataDir)}, c.opts...)...)
	if err != nil {
		return fmt.Errorf("restart kafka on port %d: %w", c.port, err)
	}
	c.kafka = kc
	if c.stopKeep, err = keepParked(kc); err != nil {
		return fmt.Errorf("restart kafka on port %d: %w", c.port, err)
	}
	return nil
}

// HoldMember holds, at the broker, member id's own Heartbeat, JoinGroup
// and SyncGroup requests until release (then they are handled as usual),
// while keeping its session alive with heartbeats sent on its behalf
// every second: the member stays in the group but neither learns of a
// rebalance nor rejoins, as a member slow in its hand-over (franz-go keeps
// heartbeating while its revoke callback runs) would. joined is called
// with the member id of every JoinGroup the broker receives meanwhile.
// stopKeepAlive ends the heartbeats on its behalf (the member freezes);
// release lets its requests through and removes the hold. It acts on the
// broker running now.
func (c *Cluster) HoldMember(group, id string, joined func(member string)) (stopKeepAlive, release func()) {
	c.mu.Lock()
	kc := c.kafka
	c.mu.Unlock()
	released, keepStop := make(chan struct{}), make(chan struct{})
	var relOnce, keepOnce sync.Once
	// proxied counts the heartbeats sent on the member's behalf not yet
	// seen by the control function (they pass; its own are held).
	var proxied atomic.Int32
	for _, k := range []kmsg.Key{kmsg.Heartbeat, kmsg.JoinGroup, kmsg.SyncGroup} {
		kc.ControlKey(int16(k), func(r kmsg.Request) (kmsg.Response, error, bool) {
			select {
			case <-released:
				kc.DropControl()
				return nil, nil, false
			default:
			}
			kc.KeepControl()
			var member string
			switch req := r.(type) {
			case *kmsg.HeartbeatRequest:
				if req.MemberID == id && proxied.Load() > 0 {
					proxied.Add(-1)
					return nil, nil, false
				}
				member = req.MemberID
			case *kmsg.JoinGroupRequest:
				member = req.MemberID
				if joined != nil {
					joined(member)
				}
			case *kmsg.SyncGroupRequest:
				member = req.MemberID
			}
			if member == id {
				kc.SleepControl(func() { <-released })
			}
			return nil, nil, false
		})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	keepDone := make(chan struct{})
	go func() {
		defer close(keepDone)
		if err != nil {
			return
		}
		defer cl.Close()
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			gi := kc.GroupInfo(group)
			if gi != nil {
				hb := kmsg.NewPtrHeartbeatRequest()
				hb.Group, hb.MemberID, hb.Generation = group, id, gi.Epoch
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				proxied.Add(1)
				_, _ = hb.RequestWith(ctx, cl)
				cancel()
			}
			select {
			case <-keepStop:
				return
			case <-released:
				return
			case <-tk.C:
			}
		}
	}()
	stopKeepAlive = func() { keepOnce.Do(func() { close(keepStop); <-keepDone }) }
	release = func() { stopKeepAlive(); relOnce.Do(func() { close(released) }) }
	return stopKeepAlive, release
}

// keepParked applies Kafka's group rule kfake lacks (issue 29): a member
// waiting in its JoinGroup or SyncGroup is not expired by its session
// timeout (kafkatest.KeepParkedMembers).
func keepParked(kc *kfake.Cluster) (func(), error) {
	stop, err := kafkatest.KeepParkedMembers(kc, 0)
	if err != nil {
		return func() {}, fmt.Errorf("kafka: keep parked group members: %w", err)
	}
	return stop, nil
}

// Produce writes records synchronously (acks from the broker).
func (c *Cluster) Produce(ctx context.Context, rs ...*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers()), kgo.DefaultProduceTopic(Topic),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce %d records: %w", len(rs), err)
	}
	return nil
}

// Close stops Kafka and Doris.
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopKeep()
	c.kafka.Close()
	c.Doris.Close()
}

// SourceTopics are the n source topics of a campaign (Config.SourceTopics):
// Topic, then Topic_t1, Topic_t2, ….
func SourceTopics(n int) []string {
	out := []string{Topic}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("%s_t%d", Topic, i))
	}
	return out
}

// CreateSourceTopics creates the source topics after Topic (partitions
// partitions each) and returns all of them.
func (c *Cluster) CreateSourceTopics(ctx context.Context, n int) ([]string, error) {
	topics := SourceTopics(n)
	if len(topics) == 1 {
		return topics, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers()))
	if err != nil {
		return nil, fmt.Errorf("create source topics: %w", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topics[1:]...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("create source topics %v: %w", topics[1:], err)
	}
	return topics, nil
}

// RouteHeader is the record header naming an event's table when a
// campaign routes the events sink to several tables (Config.RoutedTables).
const RouteHeader = "chaos-table"

// RoutedTable is the table of event eid among n routed tables: EventsTable
// for eid % n == 0, else events_r<eid % n>.
func RoutedTable(eid int64, n int) string {
	if i := eid % int64(n); i != 0 {
		return fmt.Sprintf("%s_r%d", EventsTable, i)
	}
	return EventsTable
}

// CreateRoutedTables creates the routed events tables beyond EventsTable
// (same schema) and returns all n names, EventsTable first.
func (c *Cluster) CreateRoutedTables(n int) ([]string, error) {
	names := []string{EventsTable}
	for i := 1; i < n; i++ {
		name := RoutedTable(int64(i), n)
		ddl := strings.Replace(eventsDDL, "TABLE "+EventsTable+" ", "TABLE "+name+" ", 1)
		if err := c.Doris.CreateTable(Database, ddl); err != nil {
			return nil, fmt.Errorf("create routed table %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}
