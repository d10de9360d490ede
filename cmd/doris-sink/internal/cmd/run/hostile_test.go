package run

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// poisonEnv is a topic holding issue 25's two poison-pill Avro records
// between good ones: offsets 0, 2 and 4 are rows (id 0, 1, 2), offset 1 a
// recursive record nested 700,000 deep (it overflowed the stack), offset
// 3 a record of 1000 blocks of 2^20 nulls (it ran out of memory).
type poisonEnv struct {
	*runEnv
	reg                 *srtest.Server
	deepID, nullsID     int
	deepValue, nullsVal []byte
}

func newPoisonEnv(t *testing.T) *poisonEnv {
	t.Helper()
	e := &poisonEnv{runEnv: newRunEnv(t)}
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	e.reg = reg
	register := func(subject, schema string) int {
		id, err := reg.Registry().Register(subject, sr.Schema{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	goodID := register("orders-value", `{"type":"record","name":"Row","fields":[{"name":"id","type":"long"},{"name":"v","type":"string"}]}`)
	e.deepID = register("other-value", `{"type":"record","name":"N","fields":[{"name":"n","type":["null","N"]}]}`)
	e.nullsID = register("nulls-value", `{"type":"record","name":"Z","fields":[{"name":"z","type":{"type":"array","items":"null"}}]}`)
	wire := func(id int, payload []byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), payload...)
	}
	good := func(i int) []byte {
		p := binary.AppendVarint(nil, int64(i))
		p = binary.AppendVarint(p, 1)
		return wire(goodID, append(p, 'v'))
	}
	e.deepValue = wire(e.deepID, append(bytes.Repeat([]byte{2}, 700000), 0))
	var nulls []byte
	for range 1000 {
		nulls = binary.AppendVarint(nulls, 1<<20)
	}
	e.nullsVal = wire(e.nullsID, append(nulls, 0))
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.ProducerBatchMaxBytes(2<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range [][]byte{good(0), e.deepValue, good(1), e.nullsVal, good(2)} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *poisonEnv) rows(t *testing.T) string {
	t.Helper()
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rows)
}

// TestRunDeadLettersIssue25PoisonPills: doris-sink run on a topic holding
// issue 25's two Avro poison pills between good records loads the good
// rows once and dead-letters both pills with their reason and schema id;
// the process stays up until SIGTERM.
func TestRunDeadLettersIssue25PoisonPills(t *testing.T) {
	t.Parallel()
	e := newPoisonEnv(t)
	sigs, tap, done := e.start(fmt.Sprintf(`records: { format: avro, schema_registry: { urls: [%s] },
  dead_letter_topic: orders-dlq, dead_letter_delivery: at_least_once, dead_letter_create: true }
delivery: { checkpoint_max_rows: 3 }
`, e.reg.URL()))
	tap.wait(t, "checkpoint decided")
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := e.rows(t), "[[0 v] [1 v] [2 v]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.ConsumeTopics("orders-dlq"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for len(got) < 2 {
		fs := cl.PollFetches(context.Background())
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			got = append(got, fmt.Sprintf("%s@%s %s %d bytes: %s", h[kafka.HeaderTopic], h[kafka.HeaderOffset], h[kafka.HeaderReason], len(r.Value), h[kafka.HeaderError]))
		})
	}
	for i, want := range []string{
		fmt.Sprintf("orders@1 convert %d bytes: schema id %d: avro field …n.n.n", len(e.deepValue), e.deepID),
		fmt.Sprintf("orders@3 convert %d bytes: schema id %d: avro field z", len(e.nullsVal), e.nullsID),
	} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("dead letter %d:\n got %s\nwant %s…", i, got[i], want)
		}
	}
	if !strings.Contains(got[0], "nested deeper than 10000") || !strings.Contains(got[1], "array and map items") {
		t.Errorf("dead letters %q", got)
	}
}

// TestRunRefusesIssue25PoisonPillWithoutDeadLetters: without a
// dead-letter topic the first pill stops run with an error naming
// topic/partition@offset and the schema id, after the row before it was
// loaded; a restart stops at the same record and loads nothing twice.
func TestRunRefusesIssue25PoisonPillWithoutDeadLetters(t *testing.T) {
	t.Parallel()
	e := newPoisonEnv(t)
	extra := fmt.Sprintf("records: { format: avro, schema_registry: { urls: [%s] } }\ndelivery: { checkpoint_max_rows: 1 }\n", e.reg.URL())
	for attempt := range 2 {
		_, _, done := e.start(extra)
		err := result(t, done)
		want := fmt.Sprintf("record orders/0@1 cannot be converted as avro: schema id %d: avro field …n.n.n", e.deepID)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nested deeper than 10000") {
			t.Fatalf("run %d: err %v, want one containing %q", attempt+1, err, want)
		}
		if got, want := e.rows(t), "[[0 v]]"; got != want {
			t.Fatalf("run %d: rows %s, want %s", attempt+1, got, want)
		}
	}
}

// The bounds keys reach the connector.
func TestConnectorConfigCarriesBounds(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Kafka: config.Kafka{MaxDecompressedBatchBytes: 3 << 20},
		Records: config.Records{MaxKeyBytes: 1 << 10, MaxHeadersBytes: 2 << 10}}
	kc, err := connectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kc.MaxKeyBytes != 1<<10 || kc.MaxHeadersBytes != 2<<10 || kc.MaxDecompressedBatchBytes != 3<<20 {
		t.Fatalf("key %d, headers %d, batch %d", kc.MaxKeyBytes, kc.MaxHeadersBytes, kc.MaxDecompressedBatchBytes)
	}
}
