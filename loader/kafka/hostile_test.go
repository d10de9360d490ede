package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceOversized writes ids 0..4 as JSON rows on partition 0, id 1 with
// a key of 2 KiB and id 3 with 2 KiB of headers.
func produceOversized(e *env) {
	var recs []*kgo.Record
	for i := range 5 {
		r := &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)}
		switch i {
		case 1:
			r.Key = bytes.Repeat([]byte("k"), 2048)
		case 3:
			r.Headers = []kgo.RecordHeader{{Key: "h", Value: bytes.Repeat([]byte("x"), 1024)}, {Key: "g", Value: bytes.Repeat([]byte("y"), 1024)}}
		}
		recs = append(recs, r)
	}
	e.produce(recs...)
}

// TestIssue25OversizedKeyAndHeadersDeadLettered: a record whose key or
// headers pass their bound is a bad record: dead-lettered with the
// reason, the others loaded once.
func TestIssue25OversizedKeyAndHeadersDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	produceOversized(e)
	if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	cfg.MaxKeyBytes, cfg.MaxHeadersBytes = 1024, 1024
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(5, 1, 3)
	dl := e.readDLQ("orders-dlq")
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dl))
	}
	for i, want := range []string{"its key is 2048 bytes, more than records.max_key_bytes 1024",
		"its 2 headers are 2050 bytes, more than records.max_headers_bytes 1024"} {
		if h := headers(dl[i]); h[HeaderReason] != string(ReasonConvert) || !strings.Contains(h[HeaderError], want) {
			t.Errorf("dead letter %d: headers %v, want an error containing %q", i, h, want)
		}
	}
}

// TestIssue25OversizedKeyRefused: without a dead-letter topic the first
// oversized record stops Run with a *RecordError naming it.
func TestIssue25OversizedKeyRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	produceOversized(e)
	cfg := e.config()
	cfg.MaxKeyBytes = 1024
	c := e.connector(cfg, nil)
	err := e.runToEnd(ctxFor(t), c)
	var re *RecordError
	if !errors.As(err, &re) || re.Offset != 1 || !errors.Is(err, ErrRecordTooBig) {
		t.Fatalf("Run: %v, want a *RecordError at offset 1 wrapping ErrRecordTooBig", err)
	}
}

// TestIssue25DecompressionBombRefused: a batch that decompresses past
// MaxDecompressedBatchBytes stops Run with an error naming its partition
// and offsets; before, kgo stopped fetching the partition and Run logged
// a retried fetch error forever, loading nothing while looking healthy.
func TestIssue25DecompressionBombRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 3, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic(testTopic),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedBytes(16<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bomb := fmt.Appendf(nil, `{"id":3,"v":"%s"}`, strings.Repeat("0", 3<<20))
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: bomb}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.MaxDecompressedBatchBytes = 1 << 20
	c := e.connector(cfg, nil)
	err = e.runToEnd(ctxFor(t), c)
	if err == nil || !strings.Contains(err.Error(), "partition orders/0: the record batch at offsets 3 to 3 decompresses to more than 1048576 bytes") ||
		!errors.Is(err, kgo.ErrMaxDecompress) {
		t.Fatalf("Run: %v", err)
	}
}
