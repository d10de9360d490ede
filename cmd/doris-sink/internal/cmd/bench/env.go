package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// benchDB is the emulator database of the counting tables.
const benchDB = "bench"

// tableDDL is the table of one format; counting mode parses rows minimally
// and stores nothing, so the schema only names the columns.
func tableDDL(format string) string {
	return "CREATE TABLE rows_" + format + " (id BIGINT, ts BIGINT, customer VARCHAR(32), amount DECIMAL(12,2), note VARCHAR(4096)) " +
		"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
}

// env is what lives in the parent: one kfake broker and the Doris
// emulator with a counting table per format, plus a scratch directory.
type env struct {
	kafka *kfake.Cluster
	doris *doristest.Server
	// registry serves the schema of the avro cases (avroSchema, id
	// schemaID).
	registry *srtest.Server
	schemaID int
	// protoSchemaID is the id of protoSchema (the protobuf cases),
	// jsonSchemaID jsonSchema's (the json_schema cases).
	protoSchemaID int
	jsonSchemaID  int
	brokers       []string
	dir           string
	seq           int
	// par is the parallel family's emulator (several BEs, a per-load
	// ceiling), started by parallelServer.
	par *doristest.Server
	// tls is the emulator serving FE and BE over https (the +tls
	// modes), tlsCA its CA (PEM); started by tlsServer.
	tls   *doristest.Server
	tlsCA string
	// limit is the limit line's discarding HTTP sink; limitBytes the body
	// bytes it read.
	limit      *http.Server
	limitURL   string
	limitBytes atomic.Int64
	// pin is where the children run (and the parent, when applied).
	pin pinning
}

// benchFormats are the formats with a counting table on every emulator.
var benchFormats = []string{"json", "csv", "avro", "protobuf", "json_schema"}

// countingTables creates the counting table of every format on srv.
func countingTables(srv *doristest.Server) error {
	for _, f := range benchFormats {
		if err := srv.CreateTable(benchDB, tableDDL(f)); err != nil {
			return fmt.Errorf("create table: %w", err)
		}
		if err := srv.SetCounting(benchDB, "rows_"+f, true); err != nil {
			return err
		}
	}
	return nil
}

// tlsServer starts (once) the emulator of the +tls modes: FE and BE over
// https with a throwaway CA, counting tables like the plain one's.
func (e *env) tlsServer() (*doristest.Server, error) {
	if e.tls != nil {
		return e.tls, nil
	}
	certs, err := doristest.NewCertificates("localhost", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	s, err := doristest.NewServer(doristest.SeedDatabases(benchDB), doristest.WithoutAdmin(), doristest.WithTLS(certs.Server))
	if err != nil {
		return nil, fmt.Errorf("start the TLS Doris emulator: %w", err)
	}
	if err := countingTables(s); err != nil {
		s.Close()
		return nil, err
	}
	e.tls, e.tlsCA = s, string(certs.CAPEM)
	return s, nil
}

// limitSink starts (once) the limit line's sink: an HTTP server on
// loopback that reads every body in 256 KiB blocks (as the emulator's
// counting mode does), counts the bytes and answers 200.
func (e *env) limitSink() (string, error) {
	if e.limit != nil {
		return e.limitURL, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("limit sink: %w", err)
	}
	e.limit = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 256<<10)
		for {
			n, err := r.Body.Read(buf)
			e.limitBytes.Add(int64(n))
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = e.limit.Serve(ln) }()
	e.limitURL = "http://" + ln.Addr().String() + "/discard"
	return e.limitURL, nil
}

// parallelServer starts (once) the emulator of the parallel family:
// pp.Backends BEs, each Stream Load ingesting at most pp.BytesPerSec, a
// counting json table.
func (e *env) parallelServer(pp *ParallelPlan) (*doristest.Server, error) {
	if e.par != nil {
		return e.par, nil
	}
	s, err := doristest.NewServer(doristest.SeedDatabases(benchDB), doristest.WithoutAdmin(),
		doristest.WithBackends(pp.Backends), doristest.WithLoadThroughput(pp.BytesPerSec))
	if err != nil {
		return nil, fmt.Errorf("start the parallel Doris emulator: %w", err)
	}
	if err := s.CreateTable(benchDB, tableDDL(pp.Combo.Format)); err != nil {
		s.Close()
		return nil, fmt.Errorf("create table: %w", err)
	}
	if err := s.SetCounting(benchDB, "rows_"+pp.Combo.Format, true); err != nil {
		s.Close()
		return nil, err
	}
	e.par = s
	return s, nil
}

func startEnv() (*env, error) {
	e := &env{}
	var err error
	if e.kafka, err = kfake.NewCluster(kfake.NumBrokers(1)); err != nil {
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	e.brokers = e.kafka.ListenAddrs()
	if e.doris, err = doristest.NewServer(doristest.SeedDatabases(benchDB), doristest.WithoutAdmin()); err != nil {
		e.close()
		return nil, fmt.Errorf("start Doris emulator: %w", err)
	}
	if e.registry, err = srtest.NewServer(); err != nil {
		e.close()
		return nil, fmt.Errorf("start Schema Registry: %w", err)
	}
	if e.schemaID, err = e.registry.Registry().Register("bench-value", sr.Schema{Schema: avroSchema}); err != nil {
		e.close()
		return nil, fmt.Errorf("register the avro schema: %w", err)
	}
	if e.protoSchemaID, err = e.registry.Registry().Register(protoSubject, sr.Schema{Schema: protoSchema, Type: sr.TypeProtobuf}); err != nil {
		e.close()
		return nil, fmt.Errorf("register the protobuf schema: %w", err)
	}
	if e.jsonSchemaID, err = e.registry.Registry().Register(jsonSchemaSubject, sr.Schema{Schema: jsonSchema, Type: sr.TypeJSON}); err != nil {
		e.close()
		return nil, fmt.Errorf("register the json schema: %w", err)
	}
	if err := countingTables(e.doris); err != nil {
		e.close()
		return nil, err
	}
	if e.dir, err = os.MkdirTemp("", "doris-sink-bench-"); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	if e.doris != nil {
		e.doris.Close()
	}
	if e.par != nil {
		e.par.Close()
	}
	if e.tls != nil {
		e.tls.Close()
	}
	if e.limit != nil {
		e.limit.Close()
	}
	if e.kafka != nil {
		e.kafka.Close()
	}
	if e.registry != nil {
		e.registry.Close()
	}
	if e.dir != "" {
		os.RemoveAll(e.dir)
	}
}

// caseSpec returns a spec with the endpoints and a fresh job name and
// data directory.
func (e *env) caseSpec(kind, format string) (spec, error) {
	e.seq++
	job := fmt.Sprintf("bench-%d", e.seq)
	dir, err := os.MkdirTemp(e.dir, job+"-")
	if err != nil {
		return spec{}, err
	}
	return spec{Kind: kind, Brokers: e.brokers, FE: e.doris.FEURL(), MySQL: e.doris.MySQLAddr(),
		DB: benchDB, Table: "rows_" + format, Format: format, Job: job, DataDir: dir, Registry: e.registry.URL(),
		PinCPUs: e.pin.ChildCPUs}, nil
}

// counted returns the rows the counting table of format has received.
func (e *env) counted(format string) (int64, error) {
	return countedOn(e.doris, format)
}

// countedOn returns the rows the counting table of format of srv has
// received.
func countedOn(srv *doristest.Server, format string) (int64, error) {
	rows, _, err := srv.Counts(benchDB, "rows_"+format)
	return rows, err
}

// seed creates topic with partitions and produces n rows of format and
// size round robin; it returns the end offset of each partition.
func (e *env) seed(ctx context.Context, topic string, partitions int, format string, size int, n int64) (map[int32]int64, error) {
	end, _, err := e.seedBytes(ctx, topic, partitions, format, size, n)
	return end, err
}

// seedBytes is seed, also returning the value bytes produced.
func (e *env) seedBytes(ctx context.Context, topic string, partitions int, format string, size int, n int64) (map[int32]int64, int64, error) {
	if err := e.kafka.CreateTopic(topic, int32(partitions), nil); err != nil {
		return nil, 0, fmt.Errorf("create topic %s: %w", topic, err)
	}
	return e.produceRowsBytes(ctx, topic, partitions, format, size, 0, n)
}

// warm reads topic once up to end in this process and discards it, so
// that no measured case is the first reader of freshly produced records
// (the first baseline after seeding was the slowest of its rounds in our
// runs; what in the broker or the parent's heap makes it so is not
// established, and the warm read does not remove all of it: --repeat's
// rotation and medians do the rest).
func (e *env) warm(ctx context.Context, topic string, end map[int32]int64) error {
	cl, left, err := newBareConsumer(spec{Brokers: e.brokers, Topic: topic, End: end})
	if err != nil {
		return err
	}
	defer cl.Close()
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := pollErr(fs); err != nil {
			return fmt.Errorf("warm %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset+1 == end[r.Partition] {
				left--
			}
		})
	}
	return nil
}

// deleteTopic drops topic and its records from the broker, and returns
// the freed memory to the OS: a run of many 2 GiB cases keeps one topic's
// worth in the parent at a time.
func (e *env) deleteTopic(topic string) error {
	if err := e.kafka.DeleteTopic(topic); err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	debug.FreeOSMemory()
	return nil
}

// produceRows produces rows first … first+n-1 of format and size round
// robin into the existing, empty topic; it returns the end offset of each
// partition.
func (e *env) produceRows(ctx context.Context, topic string, partitions int, format string, size int, first, n int64) (map[int32]int64, error) {
	end, _, err := e.produceRowsBytes(ctx, topic, partitions, format, size, first, n)
	return end, err
}

// produceRowsBytes is produceRows, also returning the value bytes
// produced.
func (e *env) produceRowsBytes(ctx context.Context, topic string, partitions int, format string, size int, first, n int64) (map[int32]int64, int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5e6),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(1<<20), kgo.MaxBufferedBytes(128<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("seed producer: %w", err)
	}
	defer cl.Close()
	gen := newRowGen(format, size, uint64(size)*31+uint64(partitions))
	gen.schemaID, gen.protoSchemaID, gen.jsonSchemaID = e.schemaID, e.protoSchemaID, e.jsonSchemaID
	var bytes int64
	var (
		mu   sync.Mutex
		perr error
	)
	end := map[int32]int64{}
	for i := range n {
		p := int32(i % int64(partitions))
		end[p]++
		v := gen.appendRow(nil, first+i)
		bytes += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Partition: p, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = errors.Join(perr, err)
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, 0, fmt.Errorf("seed %s: %w", topic, err)
	}
	if perr != nil {
		return nil, 0, fmt.Errorf("seed %s: %w", topic, perr)
	}
	return end, bytes, nil
}

// createTopic creates an empty topic (latency cases produce into it).
func (e *env) createTopic(topic string, partitions int) error {
	if err := e.kafka.CreateTopic(topic, int32(partitions), nil); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// endOffsets returns the end offset of every partition of topic.
func (e *env) endOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...))
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}
