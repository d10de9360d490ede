package coordlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of Config fields.
const (
	DefaultScope              = "0"
	DefaultTransactionTimeout = time.Minute
	DefaultAttempts           = 5
	DefaultBackoff            = 200 * time.Millisecond
)

// Record header keys of a state record.
const (
	// HeaderFormat carries FormatName/FormatVersion ("doris-sink-coordlog/1").
	HeaderFormat = "doris-sink-format"
	// HeaderIncarnation carries the writer incarnation's token.
	HeaderIncarnation = "doris-sink-incarnation"
)

// Transport format of a state record (the headers; the value is the
// caller's blob, versioned by the caller).
const (
	FormatName    = "doris-sink-coordlog"
	FormatVersion = 1
)

// Config configures a Log. Job and ClientOpts are required.
type Config struct {
	// Job is the job name (job.name): it names the state topic, the
	// transactional id and the record key.
	Job string
	// Scope is the writer scope, DefaultScope ("0") standalone.
	Scope string
	// Group is the consumer group that receives the offsets of Commit in
	// the same transaction; "" commits none.
	Group string
	// ClientOpts are the kgo options to reach the cluster (seed brokers,
	// TLS, SASL, client id).
	ClientOpts []kgo.Opt
	// TransactionTimeout is the producer's transaction.timeout.ms: how long
	// the coordinator keeps a transaction of a dead incarnation open before
	// aborting it (a new incarnation aborts it at once). Default
	// DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// Attempts bounds the transactions one Commit tries when Kafka answers
	// with a retriable error (coordinator not available or moving, a broker
	// restarting); default DefaultAttempts. Backoff is the wait before the
	// second attempt, doubled after each; default DefaultBackoff.
	Attempts int
	Backoff  time.Duration
	// ReplicationFactor of a state topic created by Open; 0: the broker's
	// default.
	ReplicationFactor int16
	// Logger receives the log's events; nil: none.
	Logger *slog.Logger
	// Stamp, in group mode, checks that this member owns the log's writer
	// slot and returns its membership (member id, generation, instance
	// id): a Commit with offsets calls it right before the transaction
	// begins and stamps the TxnOffsetCommit with it (KIP-447), so the
	// group coordinator refuses the offsets (*GenerationError) if the
	// membership moved on since. An error (a *NotOwnerError when the slot
	// is not in the current assignment) fails the Commit before anything
	// is written. nil: standalone, generation -1 and no member.
	Stamp func() (GroupStamp, error)
	// Failpoint is called at each cut point of AllFailpoints (tests); a
	// non-nil error crashes the log there (ErrCrashed). nil: none.
	Failpoint func(name string) error
}

// Incarnation identifies one opening of a Log: the producer id and epoch
// that InitProducerID gave it, and a random token written in every record.
// A later Open of the same job and scope gets a higher epoch (or a new
// producer id) and fences this one. Label scopes of group mode are to be
// built from it.
type Incarnation struct {
	ProducerID int64
	Epoch      int16
	Token      string
}

// String returns "producer <id> epoch <epoch>".
func (i Incarnation) String() string {
	return fmt.Sprintf("producer %d epoch %d", i.ProducerID, i.Epoch)
}

// Offsets are consumer offsets committed in a Commit's transaction.
type Offsets struct {
	// Topic and TopicID name the source topic (TopicID may be zero when
	// unknown; TxnOffsetCommit v6 needs it).
	Topic   string
	TopicID [16]byte
	// Partitions maps partition → next offset to read.
	Partitions map[int32]int64
	// Metadata is the small offset metadata, e.g. OffsetMetadata(id).
	Metadata string
	// Others are the offsets of the other source topics of a job reading
	// several, committed in the same transaction (their own Metadata is
	// not used: Metadata applies to all).
	Others []Offsets
}

// Record is the latest committed state record of a Log's key.
type Record struct {
	// Value is the caller's blob.
	Value []byte
	// Offset is the record's offset in the state topic.
	Offset int64
	// Incarnation is the token of the incarnation that wrote it.
	Incarnation string
}

// Log is one writer scope's fenced decision log in the job's state topic.
// Its methods are safe for concurrent use (Commits are serialised).
type Log struct {
	cfg   Config
	topic string
	key   string
	txnID string
	log   *slog.Logger

	cl  *kgo.Client // transactional producer, also used for admin requests
	adm *kadm.Client
	inc Incarnation
	// evMax is the evidence topic's max.message.bytes (Open).
	evMax int64
	// openEnd is the state topic's last stable offset right after Open
	// fenced the predecessors: a record of this key at or after it written
	// by another incarnation means this one was fenced.
	openEnd int64

	mu         sync.Mutex
	fenced     error // set once fenced: every call returns it
	crashed    error // set by a failpoint crash: every call returns it
	unresolved error // a transaction whose end is unknown; Load resolves it first
	closed     bool
}

// Open opens the log of cfg.Job and cfg.Scope: it makes sure the state
// topic exists and is compacted and the evidence topic exists (creating
// them when allowed; ensureEvidenceTopic), then
// initialises the producer id of the transactional id, which fences every
// previous incarnation and aborts what it left open. On error nothing stays
// open.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if cfg.Job == "" {
		return nil, errors.New("coordinator log: job name is empty")
	}
	if len(cfg.ClientOpts) == 0 {
		return nil, errors.New("coordinator log: no Kafka client options (seed brokers)")
	}
	if cfg.Scope == "" {
		cfg.Scope = DefaultScope
	}
	if cfg.TransactionTimeout <= 0 {
		cfg.TransactionTimeout = DefaultTransactionTimeout
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	l := &Log{cfg: cfg, topic: StateTopic(cfg.Job), key: RecordKey(cfg.Job, cfg.Scope),
		txnID: TransactionalID(cfg.Job, cfg.Scope), log: cfg.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	opts := append(append([]kgo.Opt{}, cfg.ClientOpts...),
		kgo.TransactionalID(l.txnID),
		kgo.TransactionTimeout(cfg.TransactionTimeout),
		kgo.DefaultProduceTopic(l.topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("coordinator log %s: kafka client: %w", l.topic, err)
	}
	l.cl, l.adm = cl, kadm.NewClient(cl)
	if err := l.open(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	l.log.Info("coordinator log open: previous incarnations fenced", "state_topic", l.topic,
		"transactional_id", l.txnID, "producer_id", l.inc.ProducerID, "epoch", l.inc.Epoch)
	return l, nil
}

func (l *Log) open(ctx context.Context) error {
	if err := ensureTopic(ctx, l.adm, l.topic, l.cfg.ReplicationFactor, l.log); err != nil {
		return err
	}
	evMax, err := ensureEvidenceTopic(ctx, l.adm, EvidenceTopic(l.cfg.Job), l.cfg.ReplicationFactor, l.log)
	if err != nil {
		return err
	}
	l.evMax = evMax
	id, epoch, err := l.cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("coordinator log %s: init producer id of transactional id %s (this fences the previous incarnation): %w",
			l.topic, l.txnID, err)
	}
	var tok [8]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return fmt.Errorf("coordinator log: incarnation token: %w", err)
	}
	l.inc = Incarnation{ProducerID: id, Epoch: epoch, Token: hex.EncodeToString(tok[:])}
	end, err := l.stableEnd(ctx)
	if err != nil {
		return err
	}
	l.openEnd = end
	return nil
}

// stableEnd returns the last stable offset of the state topic's partition 0.
func (l *Log) stableEnd(ctx context.Context) (int64, error) {
	lo, err := l.adm.ListCommittedOffsets(ctx, l.topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("coordinator log %s: last stable offset: %w", l.topic, err)
	}
	o, ok := lo.Lookup(l.topic, 0)
	if !ok {
		return 0, fmt.Errorf("coordinator log %s: partition 0 missing", l.topic)
	}
	return o.Offset, nil
}

// Topic returns the state topic.
func (l *Log) Topic() string { return l.topic }

// TransactionalID returns the transactional id of the log's writer scope.
func (l *Log) TransactionalID() string { return l.txnID }

// Incarnation returns the incarnation Open created.
func (l *Log) Incarnation() Incarnation { return l.inc }

// Admin returns an admin client over the log's connection (topic IDs,
// offsets); it is closed with the log.
func (l *Log) Admin() *kadm.Client { return l.adm }

// usable returns the error every call returns once fenced or closed.
func (l *Log) usable() error {
	switch {
	case l.crashed != nil:
		return l.crashed
	case l.fenced != nil:
		return l.fenced
	case l.closed:
		return fmt.Errorf("coordinator log %s: closed", l.topic)
	}
	return nil
}

// fence records err as the log's fencing and returns the *FencedError.
func (l *Log) fence(cause error) error {
	if l.fenced == nil {
		l.fenced = &FencedError{Job: l.cfg.Job, StateTopic: l.topic, TransactionalID: l.txnID, Incarnation: l.inc, Err: cause}
		l.log.Error("coordinator log fenced by a newer incarnation", "state_topic", l.topic,
			"transactional_id", l.txnID, "err", cause)
	}
	return l.fenced
}

// classify turns a Kafka fencing answer into the log's *FencedError.
func (l *Log) classify(err error) error {
	if err != nil && isFencedKafka(err) {
		return l.fence(err)
	}
	return err
}

// Close closes the log's client; an open transaction is left to the
// coordinator (aborted by the next incarnation or the transaction
// timeout). Idempotent.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.cl.Close()
}
