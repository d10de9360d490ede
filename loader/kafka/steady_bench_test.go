package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// The steady-state bench of the record path (BenchmarkSteadyState): the
// broker (kfake) and the Doris emulator (counting mode) run in a peer
// process, this test binary re-executed (TestSteadyPeerProcess), so the
// CPU this process spends is the consumer's or the sink's alone, as in
// `doris-sink bench`. Each iteration reads one case's topic (steadyBytes
// of record values) from its start; CPU (getrusage) is summed from the
// first fetch to the last record handed over, which leaves out the
// client's start-up, the loader's Recover and first begin, and the final
// checkpoint (the drain).

// steadyPeerEnv, set, makes a re-executed test binary the bench's peer.
const steadyPeerEnv = "DORIS_SINK_STEADY_PEER"

// steadyDB and steadyTable are the emulator's target of every case.
const (
	steadyDB    = "bench"
	steadyTable = "t"
	steadyDDL   = "CREATE TABLE t (id BIGINT, ts BIGINT, customer VARCHAR(16), amount DECIMAL(12,2), note VARCHAR(2048)) " +
		"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
)

// steadyBytes is how many bytes of record values each case's topic holds.
const steadyBytes = 64 << 20

// steadyPeer are the addresses the peer process serves.
type steadyPeer struct {
	Kafka    []string `json:"kafka"`
	FE       string   `json:"fe"`
	MySQL    string   `json:"mysql"`
	Registry string   `json:"registry"`

	in  io.Writer      // the peer's stdin: one case name a line to seed
	out *bufio.Scanner // the peer's stdout
}

// steadySeeded is the peer's answer to a seed request.
type steadySeeded struct {
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	Err     string `json:"err"`
}

// The peer's stdout lines that carry its answers.
const (
	steadyPeerLine   = "steady-peer: "
	steadySeededLine = "steady-seeded: "
)

// TestSteadyPeerProcess is the peer of BenchmarkSteadyState when
// re-executed with steadyPeerEnv set (it does nothing otherwise): a kfake
// broker, a schema registry and a Doris emulator whose table counts rows.
// It seeds the topic of each case named on a line of stdin (producing
// here keeps the producer's CPU out of the bench's process) and serves
// until stdin closes.
func TestSteadyPeerProcess(t *testing.T) {
	if os.Getenv(steadyPeerEnv) == "" {
		t.Skip("the peer process of BenchmarkSteadyState")
	}
	topics := make([]string, len(steadyCases))
	for i, c := range steadyCases {
		topics[i] = c.topic()
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	srv, err := doristest.NewServer(doristest.SeedDatabases(steadyDB), doristest.WithoutAdmin())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.CreateTable(steadyDB, steadyDDL); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetCounting(steadyDB, steadyTable, true); err != nil {
		t.Fatal(err)
	}
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	b, err := json.Marshal(steadyPeer{Kafka: kc.ListenAddrs(), FE: srv.FEURL(), MySQL: srv.MySQLAddr(), Registry: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%s\n", steadyPeerLine, b)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() { // until the bench closes stdin
		var ans steadySeeded
		i := slices.IndexFunc(steadyCases, func(c steadyCase) bool { return c.name == sc.Text() })
		if i < 0 {
			ans.Err = fmt.Sprintf("no case %q", sc.Text())
		} else if ans.Records, ans.Bytes, err = steadyCases[i].seed(kc.ListenAddrs(), reg); err != nil {
			ans.Err = err.Error()
		}
		b, err := json.Marshal(ans)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%s\n", steadySeededLine, b)
	}
}

// seed registers c's schema (registry formats) and produces steadyBytes
// of c's records to its topic, uncompressed like `doris-sink bench`'s
// topics (a compressed topic adds the same decompression to every form).
func (c steadyCase) seed(brokers []string, reg *srtest.Server) (records, bytes int64, err error) {
	schemaID := 0
	if st, schema := c.registryType(); schema != "" {
		if schemaID, err = reg.Registry().Register(c.topic()+"-value", sr.Schema{Schema: schema, Type: st}); err != nil {
			return 0, 0, err
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(c.topic()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	for bytes < steadyBytes {
		var batch []*kgo.Record
		for range 4096 {
			v := c.value(records, schemaID)
			batch = append(batch, &kgo.Record{Value: v})
			records++
			bytes += int64(len(v))
		}
		if err := cl.ProduceSync(context.Background(), batch...).FirstErr(); err != nil {
			return 0, 0, fmt.Errorf("seed %s: %w", c.topic(), err)
		}
	}
	return records, bytes, nil
}

// startSteadyPeer re-executes the test binary as the peer and returns its
// addresses; the peer ends with the bench.
func startSteadyPeer(b *testing.B) *steadyPeer {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSteadyPeerProcess$")
	cmd.Env = append(os.Environ(), steadyPeerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	p := &steadyPeer{in: stdin, out: bufio.NewScanner(stdout)}
	if err := json.Unmarshal(p.answer(b, steadyPeerLine), p); err != nil {
		b.Fatal(err)
	}
	return p
}

// answer returns the payload of the peer's next stdout line starting with
// prefix (the others are the test binary's own output).
func (p *steadyPeer) answer(b *testing.B, prefix string) []byte {
	b.Helper()
	for p.out.Scan() {
		if line, ok := strings.CutPrefix(p.out.Text(), prefix); ok {
			return []byte(line)
		}
	}
	b.Fatalf("the peer process ended without a %q line (%v)", prefix, p.out.Err())
	return nil
}

// seed asks the peer to seed c's topic.
func (p *steadyPeer) seed(b *testing.B, c steadyCase) steadySeeded {
	b.Helper()
	if _, err := fmt.Fprintln(p.in, c.name); err != nil {
		b.Fatal(err)
	}
	var ans steadySeeded
	if err := json.Unmarshal(p.answer(b, steadySeededLine), &ans); err != nil {
		b.Fatal(err)
	}
	if ans.Err != "" {
		b.Fatalf("peer: seed %s: %s", c.name, ans.Err)
	}
	return ans
}

// steadyCase is one format and record size of the bench.
type steadyCase struct {
	name   string
	format string
	size   int // record value size (JSON and CSV exactly; binary formats carry the same fields)
}

var steadyCases = []steadyCase{
	{"json-100B", FormatJSON, 100},
	{"json-1KiB", FormatJSON, 1024},
	{"csv-100B", FormatCSV, 100},
	{"avro-1KiB", FormatAvro, 1024},
	{"protobuf-1KiB", FormatProtobuf, 1024},
	{"json_schema-1KiB", FormatJSONSchema, 1024},
}

const (
	steadyAvroSchema = `{"type":"record","name":"Row","fields":[{"name":"id","type":"long"},{"name":"ts","type":"long"},
	{"name":"customer","type":"string"},{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	{"name":"note","type":"string"}]}`
	steadyProtoSchema = `syntax = "proto3";
message Row { int64 id = 1; int64 ts = 2; string customer = 3; double amount = 4; string note = 5; }`
	steadyJSONSchema = `{"type":"object","properties":{"id":{"type":"integer"},"ts":{"type":"integer"},
	"customer":{"type":"string"},"amount":{"type":"number"},"note":{"type":"string"}}}`
)

// steadyFields are the values of record i: the note pads a JSON (or, with
// csv, a CSV) row to size with hex text from a fixed pool.
func steadyFields(i int64, size int, csv bool) (id, ts int64, customer string, amount float64, note string) {
	const pool = "0123456789abcdef5f3c1e9a7b2d4068"
	id, ts, customer = i, 1_760_000_000_000+i, "c-"+strconv.FormatInt(i%1000, 10)
	amount = float64(i%100000) + 0.25
	frame := len(`{"id":,"ts":,"customer":"","amount":,"note":""}`)
	if csv {
		frame = len(",,,,")
	}
	fixed := frame + len(strconv.FormatInt(id, 10)) +
		len(strconv.FormatInt(ts, 10)) + len(customer) + len(strconv.FormatFloat(amount, 'f', -1, 64))
	n := max(size-fixed, 1)
	buf := make([]byte, n)
	for k := range buf {
		buf[k] = pool[(int(i)+k*7)%len(pool)]
	}
	return id, ts, customer, amount, string(buf)
}

// value encodes record i of c (schema id for the registry formats).
func (c steadyCase) value(i int64, schemaID int) []byte {
	id, ts, customer, amount, note := steadyFields(i, c.size, c.format == FormatCSV)
	am := strconv.FormatFloat(amount, 'f', -1, 64)
	header := func(dst []byte) []byte { return binary.BigEndian.AppendUint32(append(dst, 0), uint32(schemaID)) }
	switch c.format {
	case FormatCSV:
		return fmt.Appendf(nil, "%d,%d,%s,%s,%s", id, ts, customer, am, note)
	case FormatAvro:
		dst := binary.AppendVarint(binary.AppendVarint(header(nil), id), ts)
		dst = append(binary.AppendVarint(dst, int64(len(customer))), customer...)
		var be [8]byte
		binary.BigEndian.PutUint64(be[:], uint64(int64(amount*100)))
		k := 0
		for k < 7 && be[k] == 0 && be[k+1]&0x80 == 0 {
			k++
		}
		dst = append(binary.AppendVarint(dst, int64(8-k)), be[k:]...)
		return append(binary.AppendVarint(dst, int64(len(note))), note...)
	case FormatProtobuf:
		dst := append(header(nil), 0) // message index [0]
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), uint64(id))
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 2, protowire.VarintType), uint64(ts))
		dst = protowire.AppendString(protowire.AppendTag(dst, 3, protowire.BytesType), customer)
		dst = protowire.AppendFixed64(protowire.AppendTag(dst, 4, protowire.Fixed64Type), math.Float64bits(amount))
		return protowire.AppendString(protowire.AppendTag(dst, 5, protowire.BytesType), note)
	}
	js := fmt.Appendf(nil, `{"id":%d,"ts":%d,"customer":%q,"amount":%s,"note":%q}`, id, ts, customer, am, note)
	if c.format == FormatJSONSchema {
		return append(header(nil), js...)
	}
	return js
}

// steadyEnv is one case's seeded topic, its schema registry and the
// peer's addresses.
type steadyEnv struct {
	c       steadyCase
	peer    *steadyPeer
	topic   string
	records int64
	bytes   int64
	schemas SchemaDecoder
	client  *doris.Client
}

var steadyJobs atomic.Int64

// newSteadyEnv seeds c's topic; cleanup (the parent bench's) closes what
// it opened when every form of the case has run.
func newSteadyEnv(b *testing.B, cleanup func(func()), peer *steadyPeer, c steadyCase) *steadyEnv {
	b.Helper()
	seeded := peer.seed(b, c)
	e := &steadyEnv{c: c, peer: peer, topic: c.topic(), records: seeded.Records, bytes: seeded.Bytes}
	var err error
	if st, schema := c.registryType(); schema != "" {
		if e.schemas, err = registry.New(registry.Config{URLs: []string{peer.Registry}, SchemaType: st}); err != nil {
			b.Fatal(err)
		}
	}
	if e.client, err = doris.NewClient(doris.Config{FE: []string{peer.FE}, MySQL: peer.MySQL, User: "root"}); err != nil {
		b.Fatal(err)
	}
	cleanup(func() { e.client.Close() })
	return e
}

func (c steadyCase) topic() string { return "steady-" + c.name }

func (c steadyCase) registryType() (sr.SchemaType, string) {
	switch c.format {
	case FormatAvro:
		return sr.TypeAvro, steadyAvroSchema
	case FormatProtobuf:
		return sr.TypeProtobuf, steadyProtoSchema
	case FormatJSONSchema:
		return sr.TypeJSON, steadyJSONSchema
	}
	return 0, ""
}

// cpuNow is this process's user+system CPU time.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// consumerOpts are the bare consumer's options: the Connector's fetch
// sizing (what `doris-sink bench`'s baseline uses), from offset 0.
func (e *steadyEnv) consumerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(e.peer.Kafka...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{e.topic: {0: kgo.NewOffset().At(0)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), kgo.FetchMaxBytes(DefaultFetchMaxBytes),
		kgo.BrokerMaxReadBytes(100 << 20), kgo.FetchIsolationLevel(kgo.ReadCommitted())}
}

// sizedOpts are consumerOpts with the Connector's fetch sizing (one
// partition may fill a whole fetch, client.go).
func (e *steadyEnv) sizedOpts() []kgo.Opt {
	return append(e.consumerOpts(), kgo.FetchMaxPartitionBytes(DefaultFetchMaxBytes))
}

// stream polls cl until every record of the topic was passed to each,
// then closes it; it returns the CPU spent from the first fetch's return
// to the last record's hand-over.
func (e *steadyEnv) stream(b *testing.B, cl *kgo.Client, each func(topic string, p *kgo.FetchPartition) error) time.Duration {
	b.Helper()
	ctx := context.Background()
	var seen int64
	var cpu0 time.Duration
	for seen < e.records {
		fs := cl.PollFetches(ctx)
		if cpu0 == 0 {
			cpu0 = cpuNow(b)
		}
		if err := fs.Err(); err != nil {
			b.Fatal(err)
		}
		for i := range fs {
			for j := range fs[i].Topics {
				t := &fs[i].Topics[j]
				for k := range t.Partitions {
					p := &t.Partitions[k]
					seen += int64(len(p.Records))
					if err := each(t.Topic, p); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	cpu := cpuNow(b) - cpu0
	b.StopTimer()
	cl.Close() // an idle client's long polls would count in the next window
	b.StartTimer()
	return cpu
}

// newLoader opens a Loader on a fresh job (labels never repeat) with a
// memory store, recovered: the loader's start-up, outside the timed part.
func (e *steadyEnv) newLoader(b *testing.B) *loader.Loader {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	job := fmt.Sprintf("steady-%d-%d", os.Getpid(), steadyJobs.Add(1))
	owner := checkpoint.Owner{Job: job, DB: steadyDB, Table: steadyTable, Source: "kafka:" + e.topic, Writer: "0"}
	ld, err := loader.New(e.client, loader.Config{Job: job, DB: steadyDB, Table: steadyTable, Source: owner.Source,
		Format: LoaderFormat(e.c.format), Store: checkpoint.NewMemory(owner)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ld.Recover(context.Background()); err != nil {
		b.Fatal(err)
	}
	return ld
}

// steadyCheckpointBytes caps a checkpoint in the bench, so a topic's
// stream carries a few cycles (precommit, decide, commit) in its window.
const steadyCheckpointBytes = 16 << 20

// BenchmarkSteadyState is the per-byte CPU of the record path at steady
// state for each format, in three forms that read the same topic from the
// same peer:
//   - consumer: a bare franz-go consumer that discards the records (the
//     baseline of `doris-sink bench`: FetchMaxBytes 16 MiB, kgo's default
//     1 MiB per partition);
//   - consumer-sized: the same with the Connector's fetch sizing (one
//     partition may fill a whole fetch), the like-for-like consumer;
//   - limit: consumer-sized writing each value unconverted through the
//     Loader (buffer, body pipe, chunked HTTP to the emulator, 2PC
//     checkpoints): the physical limit of the path with no conversion;
//   - sink: the consumer handing each fetched partition to the
//     Connector's record loop (handlePartition: conversion, checks,
//     counters) on a Loader.
//
// The metric cpu-ns/B is this process's CPU (getrusage) per byte of
// record values within the window; MB/s is wall time of the stream.
// Compare a form's cpu-ns/B with the consumer's of the same run.
func BenchmarkSteadyState(b *testing.B) {
	parent := b
	peer := startSteadyPeer(b)
	for _, c := range steadyCases {
		var e *steadyEnv
		env := func(b *testing.B) *steadyEnv {
			if e == nil {
				e = newSteadyEnv(b, parent.Cleanup, peer, c)
			}
			return e
		}
		b.Run(c.name+"/consumer", func(b *testing.B) {
			e := env(b)
			e.run(b, func() time.Duration {
				cl := e.newClient(b, e.consumerOpts())
				return e.stream(b, cl, func(string, *kgo.FetchPartition) error { return nil })
			})
		})
		b.Run(c.name+"/consumer-sized", func(b *testing.B) {
			e := env(b)
			e.run(b, func() time.Duration {
				return e.stream(b, e.newClient(b, e.sizedOpts()), func(string, *kgo.FetchPartition) error { return nil })
			})
		})
		b.Run(c.name+"/limit", func(b *testing.B) {
			e := env(b)
			e.run(b, func() time.Duration {
				cl := e.newClient(b, e.sizedOpts())
				ld := e.newLoader(b)
				ctx := context.Background()
				var n int64
				cpu := e.stream(b, cl, func(_ string, p *kgo.FetchPartition) error {
					for _, r := range p.Records {
						if err := ld.Write(ctx, r.Value); err != nil {
							return err
						}
						if n += int64(len(r.Value)); n >= steadyCheckpointBytes {
							n = 0
							if err := ld.Checkpoint(ctx, []byte(strconv.FormatInt(r.Offset, 10))); err != nil {
								return err
							}
						}
					}
					return nil
				})
				e.finish(b, ld, func(ctx context.Context) error { return ld.Checkpoint(ctx, []byte(`"end"`)) })
				return cpu
			})
		})
		b.Run(c.name+"/sink", func(b *testing.B) {
			e := env(b)
			e.run(b, func() time.Duration {
				ld := e.newLoader(b)
				conn, err := New(Config{Brokers: peer.Kafka, Topic: e.topic, Format: c.format, Schemas: e.schemas,
					Start: StartEarliest, CheckpointInterval: time.Hour, CheckpointMaxBytes: steadyCheckpointBytes,
					PartitionRefresh: -1}, ld)
				if err != nil {
					b.Fatal(err)
				}
				conn.next = topicOffsets{}
				// The Connector's own client options (fetch sizing), from 0.
				cl := e.newClient(b, conn.consumerOpts(topicOffsets{e.topic: {0: 0}}))
				ctx := context.Background()
				cpu := e.stream(b, cl, func(topic string, p *kgo.FetchPartition) error {
					return conn.handlePartition(ctx, topic, p)
				})
				if got := conn.metrics.Records.Load(); got != e.records {
					b.Fatalf("the record loop handled %d records, want %d", got, e.records)
				}
				e.finish(b, ld, conn.checkpoint)
				return cpu
			})
		})
	}
}

// run times every iteration's stream and reports its CPU per byte.
func (e *steadyEnv) run(b *testing.B, iter func() time.Duration) {
	b.SetBytes(e.bytes)
	var cpu time.Duration
	var n int64
	for b.Loop() {
		cpu += iter()
		n++
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*e.bytes), "cpu-ns/B")
}

// newClient opens a consumer with opts outside the timed part (stream
// closes it).
func (e *steadyEnv) newClient(b *testing.B, opts []kgo.Opt) *kgo.Client {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

// finish decides the last checkpoint (drain, outside the window) and
// checks the emulator received nothing less than the topic's rows.
func (e *steadyEnv) finish(b *testing.B, ld *loader.Loader, last func(context.Context) error) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	ctx := context.Background()
	if err := last(ctx); err != nil {
		b.Fatal(err)
	}
	if err := ld.Close(ctx); err != nil {
		b.Fatal(err)
	}
}
