package kafka

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readDLQ returns the records of topic (one partition) up to its end.
func (e *env) readDLQ(topic string) []*kgo.Record {
	e.t.Helper()
	want := e.end(topic).Offsets[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctxFor(e.t))
		if err := fs.Err0(); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func headers(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

// A dead-letter topic needs exactly-once staging (WithDeadLetterStager,
// job.coordinator kafka) or the explicit at-least-once choice: New refuses
// it otherwise, naming both ways out.
func TestDeadLetterTopicNeedsStagerOrAtLeastOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	cfg := e.config()
	cfg.DeadLetterTopic = "orders-dlq"
	ld := e.loader(nil)
	defer ld.Close(context.Background())
	_, err := New(cfg, ld)
	if !errors.Is(err, ErrDeadLetterNeedsStager) || !strings.Contains(err.Error(), "job.coordinator: kafka") ||
		!strings.Contains(err.Error(), "at_least_once") {
		t.Fatalf("New: %v, want ErrDeadLetterNeedsStager naming the ways out", err)
	}
}

// Issue 11: a dead-letter topic that does not exist failed at the first bad
// record. Run now refuses before reading anything, naming the topic and the
// command that creates it; records.dead_letter_create creates it instead.
func TestDeadLetterTopicCheckedAtStart(t *testing.T) {
	t.Parallel()
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 2)
		produceBad(e)
		cfg := e.config()
		cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "no-such-dlq", true
		c := e.connector(cfg, nil)
		err := c.Run(ctxFor(t))
		var te *DeadLetterTopicError
		if !errors.As(err, &te) || !te.Missing || te.Topic != "no-such-dlq" ||
			!strings.Contains(err.Error(), "kafka-topics.sh") || !strings.Contains(err.Error(), "records.dead_letter_create") {
			t.Fatalf("Run: %v, want a *DeadLetterTopicError naming no-such-dlq and kafka-topics.sh", err)
		}
		if n := c.Metrics().Records.Load(); n != 0 {
			t.Fatalf("%d records read before the refusal, want none", n)
		}
		if n := c.Metrics().Recovers.Load(); n != 0 {
			t.Fatalf("%d Recover calls before the refusal, want none", n)
		}
	})
	t.Run("created", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 2)
		produceBad(e)
		cfg := e.config()
		cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce, cfg.DeadLetterCreate = "new-dlq", true, true
		c := e.connector(cfg, nil)
		if err := e.runToEnd(ctxFor(t), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		td, err := e.adm.ListTopics(ctxFor(t), "new-dlq")
		if err != nil || td["new-dlq"].Err != nil || len(td["new-dlq"].Partitions) != 2 {
			t.Fatalf("new-dlq after Run: %+v %v, want it created with 2 partitions (as orders)", td["new-dlq"], err)
		}
		if got := c.Metrics().DeadLettered.Load(); got != 1 {
			t.Fatalf("DeadLettered = %d, want 1", got)
		}
	})
}

// Issue 11: a 5 MB bad record could not be dead-lettered
// (MESSAGE_TOO_LARGE) and the job refused forever. A dead letter larger
// than the topic's max.message.bytes (read at start) is truncated to fit,
// with headers carrying the original size and SHA-256.
func TestOversizedDeadLetterIsTruncated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx := ctxFor(t)
	limit := "4096"
	if _, err := e.adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &limit}, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	big := []byte("not json " + strings.Repeat("x", 20000))
	e.produceIDs(0, 3, 1)
	e.produce(&kgo.Record{Key: []byte("k"), Value: big})
	e.produceIDs(4, 6, 1)
	cfg := e.config()
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(6, 3)
	recs := e.readDLQ("orders-dlq")
	if len(recs) != 1 {
		t.Fatalf("dead-letter topic holds %d records, want 1", len(recs))
	}
	r := recs[0]
	h := headers(r)
	sum := sha256.Sum256(big)
	if len(r.Value) == 0 || len(r.Value) >= 4096 || !bytes.HasPrefix(big, r.Value) {
		t.Fatalf("dead letter value is %d bytes, want a prefix of the original under 4096", len(r.Value))
	}
	if h[HeaderTruncated] != "true" || h[HeaderOriginalSize] != strconv.Itoa(len(big)) ||
		h[HeaderOriginalSHA256] != hex.EncodeToString(sum[:]) || h[HeaderOffset] != "3" || h[HeaderReason] != string(ReasonConvert) {
		t.Fatalf("dead letter headers %v, want truncated, size %d, its sha256, offset 3, reason convert", h, len(big))
	}
	if got := c.Metrics().DeadLettersTruncated(); got != 1 {
		t.Fatalf("DeadLettersTruncated = %d, want 1", got)
	}
}

// fakeStager records what the Connector stages (the file store of these
// tests does not produce them).
type fakeStager struct {
	mu     sync.Mutex
	staged [][]*kgo.Record
}

func (f *fakeStager) SetDeadLetterBatchBytes(int64) {}

func (f *fakeStager) StageDeadLetters(recs []*kgo.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if recs != nil {
		f.staged = append(f.staged, recs)
	}
}

// The dead letters staged for one checkpoint are bounded: reaching
// records.dead_letter_buffer_bytes ends the checkpoint (here after two dead
// letters although the row cap is far).
func TestStagedDeadLettersForceTheBarrier(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	var recs []*kgo.Record
	for i := range 9 {
		recs = append(recs, &kgo.Record{Value: []byte("bad " + strings.Repeat("y", 200))})
		recs = append(recs, &kgo.Record{Value: []byte(`{"id":` + strconv.Itoa(i) + `,"v":"a"}`)})
	}
	e.produce(recs...)
	cfg := e.config()
	cfg.CheckpointMaxRows = 1000
	cfg.DeadLetterTopic, cfg.DeadLetterBufferBytes = "orders-dlq", 600
	if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	st := &fakeStager{}
	var rec recorder
	c := e.connector(cfg, nil, WithDeadLetterStager(st), WithOnCheckpoint(rec.add))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var total int
	for _, s := range st.staged {
		var size int64
		for _, r := range s {
			size += recordSize(r)
		}
		if len(s) > 2 || size >= 600+400 {
			t.Errorf("one checkpoint staged %d dead letters (%d bytes), want at most 2 (bound 600 bytes)", len(s), size)
		}
		total += len(s)
	}
	if total != 9 || len(st.staged) < 4 {
		t.Fatalf("staged %d dead letters in %d checkpoints, want 9 in at least 4", total, len(st.staged))
	}
	if n := len(rec.stats()); n < 4 {
		t.Fatalf("%d checkpoints, want the buffer bound to end at least 4", n)
	}
}

// Issue 11: one WARN per dead letter (200,000 bad records gave 41 MB of
// log). Now one line per reason per interval, with counts, and one at the
// end of Run for what was not logged yet; the metric counts per reason.
func TestDeadLetterLoggingIsRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	var recs []*kgo.Record
	for range 200 {
		recs = append(recs, &kgo.Record{Value: []byte("not json")})
	}
	e.produce(recs...)
	e.produceIDs(0, 3, 1)
	if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	var logs syncBuffer
	c := e.connector(cfg, nil, WithClock(newManualClock()),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var dl []string
	for _, l := range lines {
		if strings.Contains(l, "records dead-lettered") {
			dl = append(dl, l)
		}
	}
	if len(dl) != 2 || !strings.Contains(dl[0], "count=1 ") || !strings.Contains(dl[1], "count=199 ") ||
		!strings.Contains(dl[1], "total=200") || !strings.Contains(dl[0], "reason=convert") {
		t.Fatalf("dead-letter log lines %q, want 2 (the first at once, 199 more at the end)", dl)
	}
	if got := c.Metrics().DeadLetteredByReason()[ReasonConvert]; got != 200 {
		t.Fatalf("DeadLetteredByReason[convert] = %d, want 200", got)
	}
}

// A dead-letter topic this principal may not write to is refused before
// anything is read, naming the topic and the kafka-acls.sh line (the
// broker's authorized operations, KIP-430).
func TestDeadLetterTopicNotWritable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	topicACL := func(name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral,
			Operation: op, Allow: true}
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, testTopic, "ro-dlq"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "admin", "admin"), kfake.EnableACLs(),
		kfake.User("PLAIN", "u", "p", topicACL(testTopic, kmsg.ACLOperationRead), topicACL(testTopic, kmsg.ACLOperationDescribe),
			topicACL("ro-dlq", kmsg.ACLOperationDescribe), topicACL("ro-dlq", kmsg.ACLOperationDescribeConfigs)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cfg := e.config()
	cfg.Brokers = kc.ListenAddrs()
	cfg.SASL = SASL{Mechanism: SASLPlain, User: "u", Password: "p"}
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "ro-dlq", true
	c := e.connector(cfg, nil)
	err = c.Run(ctxFor(t))
	var te *DeadLetterTopicError
	if !errors.As(err, &te) || te.Missing || te.Topic != "ro-dlq" || !strings.Contains(err.Error(), "kafka-acls.sh") ||
		!strings.Contains(err.Error(), "--operation Write") {
		t.Fatalf("Run: %v, want a *DeadLetterTopicError: ro-dlq not writable, with the kafka-acls.sh line", err)
	}
	if n := c.Metrics().Recovers.Load(); n != 0 {
		t.Fatalf("%d Recover calls before the refusal, want none", n)
	}
}
