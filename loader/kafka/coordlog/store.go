package coordlog

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Store document identifiers: the value of every state record a Store
// writes.
const (
	StoreFormatName    = "doris-sink-kafka-state"
	StoreFormatVersion = 1
)

// document is a state record's value: the checkpoint state in the file
// store's encoding (checkpoint.Encode, with its checksum) and what the
// source positions need besides.
type document struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	Checkpoint json.RawMessage `json:"checkpoint"`
	Source     sourceInfo      `json:"source"`
	// DeadLetters records the dead letters the decisions produced and
	// the rows Doris refused (deadletter_mark.go); nil in documents
	// written before.
	DeadLetters *deadLetterInfo `json:"dead_letters,omitempty"`
}

type sourceInfo struct {
	// Topic is the source topic; TopicID its topic ID (hex) when the
	// positions were recorded: the form of positions of one topic (the
	// only form before kafka.topics).
	Topic   string `json:"topic"`
	TopicID string `json:"topic_id,omitempty"`
	// TopicIDs are the topic IDs (hex) of the topics the positions name
	// when they name several (Topic and TopicID are then empty): topic →
	// ID when the positions were recorded.
	TopicIDs map[string]string `json:"topic_ids,omitempty"`
	// FirstStart is the resolved first-start position (kafka.Position
	// JSON), persisted before the first record was read.
	FirstStart json.RawMessage `json:"first_start,omitempty"`
	// Slots is the job's writer slot count (job.slots) when the record
	// was written; absent (0) means 1, a standalone job
	// (SlotsMismatchError).
	Slots int `json:"slots,omitempty"`
}

// StoreConfig configures a Store.
type StoreConfig struct {
	// Log configures the coordinator log (Job, Group, ClientOpts...).
	Log Config
	// Owner is the checkpoint-store owner; Owner.Job must be Log.Job and
	// Owner.Writer is the log's scope.
	Owner checkpoint.Owner
	// PreviousSources are the owner sources the store adopts
	// (checkpoint.Owner.Adopts): a state recorded for Owner but for one of
	// these sources loads with Owner, which the next Save records.
	PreviousSources []string
	// Topic is the source topic whose offsets the decisions hold
	// (kafka.topic); Topics the source topics of a job reading several
	// (kafka.topics). Recorded positions naming another topic are refused
	// (*kafka.RemovedTopicError). With TopicRegex set both are empty and
	// every topic the positions name is accepted (the connector checks it
	// against the regex).
	Topic      string
	Topics     []string
	TopicRegex string
	// Rebase opens the store for `checkpoint rebase`: a recreated source
	// topic (*TopicRecreatedError) is accepted, and the next Save records
	// the current topic ID with the positions the operator chose.
	Rebase bool
	// Slots is the job's writer slot count (job.slots; 0 means 1). Every
	// save records it; OpenStore refuses a state topic where any writer
	// scope's record holds another count (*SlotsMismatchError).
	Slots int
	// AnySlots opens the store whatever slot count the records hold (the
	// operator command that re-slots a job); Slots is still what the
	// next save records.
	AnySlots bool
}

// Store is a checkpoint.Store whose state lives in the job's Kafka
// coordinator log: every Save is one transaction that writes the state
// record and commits the decided end position to the consumer group
// (metadata "doris-sink:chk=<id>"). It also implements kafka.StartStore,
// and records the ID of every source topic the positions name with them: a
// Store opened while one of them was recreated is refused
// (*TopicRecreatedError naming it). Safe for concurrent use.
type Store struct {
	log    *Log
	owner  checkpoint.Owner
	prev   []string // StoreConfig.PreviousSources
	topics []string // configured source topics (nil: kafka.topic_regex)
	rebase bool     // StoreConfig.Rebase
	slots  int      // StoreConfig.Slots, at least 1
	// topic and tid are the only source topic of a job reading one (""
	// with several or a regex) and its current topic ID (hex): the topic
	// the one-topic form of the document's dead-letter marks is of
	// (deadletter_mark.go; a job reading several topics records them per
	// topic).
	topic, tid string

	mu   sync.Mutex
	tids map[string]string // current topic IDs looked up, hex

	last *checkpoint.State // last state loaded or saved
	doc  document          // last document loaded or saved (Source)
	// staged are the dead letters of the next decision
	// (StageDeadLetters); batchBytes bounds their record batches
	// (SetDeadLetterBatchBytes; 0: the client's default).
	staged     []*kgo.Record
	batchBytes int64
	// evidence are the evidence entries staged for the next save
	// (StageEvidence).
	evidence []ledger.Entry
	// totals are the scope's cumulative totals after its last evidence
	// record (EvidenceTotals; nil until learned at open or, for a scope
	// whose last record carries none, set at the first write).
	totals *EvidenceTotals
}

var (
	_ checkpoint.Store       = (*Store)(nil)
	_ kafka.StartStore       = (*Store)(nil)
	_ kafka.DeadLetterStager = (*Store)(nil)
	_ kafka.RefusedRowSource = (*Store)(nil)
)

// OpenStore opens the log (fencing every previous incarnation of the job),
// reads the latest state and checks it: the owner must match and the
// source topic must be the one the positions were recorded for. On error
// nothing stays open.
func OpenStore(ctx context.Context, cfg StoreConfig) (*Store, error) {
	if err := cfg.Owner.Validate(); err != nil {
		return nil, fmt.Errorf("kafka checkpoint store: %w", err)
	}
	if cfg.Owner.Job != cfg.Log.Job {
		return nil, fmt.Errorf("kafka checkpoint store: owner job %q differs from the log's job %q", cfg.Owner.Job, cfg.Log.Job)
	}
	topics := cfg.Topics
	if cfg.Topic != "" {
		topics = append([]string{cfg.Topic}, topics...)
	}
	if len(topics) == 0 && cfg.TopicRegex == "" {
		return nil, errors.New("kafka checkpoint store: source topic is empty")
	}
	cfg.Log.Scope = cfg.Owner.Writer
	l, err := Open(ctx, cfg.Log)
	if err != nil {
		return nil, err
	}
	s := &Store{log: l, owner: cfg.Owner, prev: cfg.PreviousSources, topics: topics, rebase: cfg.Rebase,
		slots: max(cfg.Slots, 1), tids: map[string]string{}}
	if !cfg.AnySlots {
		if err := s.checkSlots(ctx, s.slots); err != nil {
			l.Close()
			return nil, err
		}
	}
	for _, t := range topics {
		if _, err := s.topicID(ctx, t); err != nil {
			l.Close()
			return nil, fmt.Errorf("kafka checkpoint store: %w", err)
		}
	}
	if len(topics) == 1 && cfg.TopicRegex == "" {
		s.topic, s.tid = topics[0], s.tids[topics[0]]
	}
	if _, err := s.Load(ctx); err != nil {
		l.Close()
		return nil, err
	}
	// The log fenced every previous incarnation of the scope, so its last
	// evidence record is final: the totals continue from it.
	last, err := l.lastEvidenceOf(ctx, evidenceKey(cfg.Owner.Job, EvidenceWriterSlot, cfg.Owner.Writer))
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("kafka checkpoint store: cumulative totals of writer scope %s: %w", cfg.Owner.Writer, err)
	}
	if last != nil && last.Totals != nil {
		t := last.Totals.Clone()
		t.Add(last.Entries)
		s.totals = &t
	}
	return s, nil
}

// Slots returns the slot count the store records (StoreConfig.Slots).
func (s *Store) Slots() int { return s.slots }

// Log returns the coordinator log (incarnation, state topic).
func (s *Store) Log() *Log { return s.log }

// Load reads the latest state record from Kafka (read_committed, after the
// open fenced every predecessor); a log without one gives
// checkpoint.NewState(owner).
func (s *Store) Load(ctx context.Context) (*checkpoint.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok, err := s.log.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint state: %w", err)
	}
	if !ok {
		s.last, s.doc = checkpoint.NewState(s.owner), document{}
		return s.last.Clone(), nil
	}
	st, doc, err := s.decode(rec)
	if err != nil {
		return nil, err
	}
	if s.owner.Adopts(st.Owner, s.prev) {
		s.log.log.Info("coordinator log: state of a one-topic job adopted by a job reading several topics; the next "+
			"decision records the new source", "state_topic", s.log.Topic(), "stored_source", st.Owner.Source,
			"source", s.owner.Source)
		st.Owner = s.owner
	}
	if st.Owner != s.owner {
		return nil, fmt.Errorf("load checkpoint state: %w", &checkpoint.OwnerError{Dir: s.log.Topic(), Stored: st.Owner, Config: s.owner})
	}
	var recreated *TopicRecreatedError
	var removed *kafka.RemovedTopicError
	if err := s.checkTopic(ctx, doc, st); err != nil &&
		!(s.rebase && (errors.As(err, &recreated) || errors.As(err, &removed))) {
		return nil, err
	}
	s.last, s.doc = st, doc
	return st.Clone(), nil
}

func (s *Store) decode(rec Record) (*checkpoint.State, document, error) {
	return decodeDocument(s.log.Topic(), rec)
}

// checkTopic refuses positions naming a topic that is not configured
// (*kafka.RemovedTopicError, with configured topics) and positions
// recorded for another incarnation of one of their topics
// (*TopicRecreatedError naming it). A recorded topic that does not exist
// now is not checked here: the connector reports it missing.
func (s *Store) checkTopic(ctx context.Context, doc document, st *checkpoint.State) error {
	pos := string(doc.Source.FirstStart)
	if st.Decided != nil {
		pos = string(st.Decided.End)
	}
	ids := doc.Source.ids()
	if s.topics != nil {
		names := slices.Collect(maps.Keys(ids))
		if doc.Source.Topic != "" {
			names = append(names, doc.Source.Topic)
		}
		if p, ok, err := kafka.ParsePosition([]byte(pos)); err == nil && ok {
			names = append(names, p.TopicNames()...)
		}
		slices.Sort(names)
		for _, t := range names {
			if !slices.Contains(s.topics, t) {
				return fmt.Errorf("state topic %s: %w", s.log.Topic(), &kafka.RemovedTopicError{Topic: t, Position: pos})
			}
		}
	}
	for _, t := range slices.Sorted(maps.Keys(ids)) {
		cur, err := s.topicID(ctx, t)
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			continue
		}
		if err != nil {
			return fmt.Errorf("load checkpoint state: %w", err)
		}
		if ids[t] != cur {
			return &TopicRecreatedError{Job: s.owner.Job, StateTopic: s.log.Topic(), Topic: t,
				StoredID: ids[t], CurrentID: cur, Positions: pos}
		}
	}
	return nil
}

// ids returns the topic IDs recorded with the positions, topic → hex ID,
// in either form.
func (si sourceInfo) ids() map[string]string {
	if si.TopicIDs != nil {
		return si.TopicIDs
	}
	if si.Topic != "" && si.TopicID != "" {
		return map[string]string{si.Topic: si.TopicID}
	}
	return map[string]string{}
}

// topicID returns topic's current topic ID (hex), looked up once per
// Store; s.mu is held or the Store is not shared yet.
func (s *Store) topicID(ctx context.Context, topic string) (string, error) {
	if id, ok := s.tids[topic]; ok {
		return id, nil
	}
	id, err := s.log.TopicID(ctx, topic)
	if err != nil {
		return "", err
	}
	s.tids[topic] = hex.EncodeToString(id[:])
	return s.tids[topic], nil
}

// Save validates st, refuses another owner or a state that moves the store
// backwards, and writes it in one transaction with the decided end
// position committed to the consumer group. After an error nothing of st
// is visible, or the outcome is unknown and the next Load tells (it
// resolves the transaction first). A fenced store returns an error
// wrapping checkpoint.ErrFenced, now and on every later call.
func (s *Store) Save(ctx context.Context, st *checkpoint.State) error {
	if st == nil {
		return fmt.Errorf("save checkpoint state: %w", &checkpoint.InvariantError{Reason: "state is nil"})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Owner != s.owner {
		return fmt.Errorf("save checkpoint state: %w", &checkpoint.OwnerError{Dir: s.log.Topic(), Stored: s.owner, Config: st.Owner})
	}
	if err := checkpoint.CheckTransition(s.last, st); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	doc := s.doc
	var offs *Offsets
	if d := st.Decided; d != nil && len(d.End) > 0 {
		pos, ok, err := kafka.ParsePosition(d.End)
		if err != nil {
			return fmt.Errorf("save checkpoint state: decided end of checkpoint %d: %w", d.ID, err)
		}
		if ok {
			for _, t := range pos.TopicNames() {
				o := Offsets{Topic: t, Partitions: pos.Of(t), Metadata: OffsetMetadata(d.ID)}
				if offs == nil {
					offs = &o
				} else {
					offs.Others = append(offs.Others, o)
				}
			}
		}
	}
	// A decision, new or a heal, produces the staged dead letters not
	// produced before (the marks in the document) and advances the marks
	// in the same transaction.
	var letters []*kgo.Record
	decision := decides(s.last, st) != decidesNothing
	if !decision && s.log.cfg.Stamp != nil {
		// Group mode: the offsets went with the decision; a save that
		// decides nothing (the committed mark) commits none, so it needs no
		// membership stamp (the producer epoch still fences it).
		offs = nil
	}
	if decision {
		letters, doc.DeadLetters = s.deadLettersFor(st.Decided)
	}
	entries := append(slices.Clone(s.evidence), transitionEvidence(s.owner, s.last, st, time.Now())...)
	if err := s.write(ctx, st, doc, offs, Extra{Records: letters, BatchBytes: s.batchBytes}, entries); err != nil {
		return err
	}
	if decision {
		s.staged = nil
	}
	s.evidence = nil
	return nil
}

// StageEvidence stages evidence entries of events that have no decision
// of their own (an aborted txn, a table created or changed by the sink):
// the next Save writes them in its transaction, before the entries it
// derives itself. A process that ends before its next save loses them
// (the event itself is in Doris: the txn's ABORTED state, the table's
// DDL). Safe for concurrent use.
func (s *Store) StageEvidence(entries ...ledger.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evidence = append(s.evidence, entries...)
}

// StageDeadLetters replaces the dead letters the next decision produces
// (kafka.DeadLetterStager): the Save that decides a checkpoint (new, or a
// heal) produces in its transaction, with the decision record and the
// offsets, those not produced by an earlier decision (their source offset
// at or past the document's mark of their topic and partition,
// deadletter_mark.go), so
// that read_committed readers see each exactly once, when its first
// decision is durable. Each record's topic and partition must be set.
func (s *Store) StageDeadLetters(recs []*kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged = recs
}

// SetDeadLetterBatchBytes bounds the record batches the dead letters are
// produced in (kafka.DeadLetterStager): the dead-letter topic's
// max.message.bytes.
func (s *Store) SetDeadLetterBatchBytes(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batchBytes = n
}

// decision kinds of a Save (decides).
const (
	decidesNothing = iota // no decision, or the same as before
	decidesNew            // a checkpoint not decided before
	decidesAgain          // a new decision of the checkpoint decided before (a heal)
)

// decides says what st decides compared with last.
func decides(last, st *checkpoint.State) int {
	d := st.Decided
	if d == nil {
		return decidesNothing
	}
	if last == nil || last.Decided == nil || last.Decided.ID != d.ID {
		return decidesNew
	}
	if !last.Decided.DecidedAt.Equal(d.DecidedAt) || last.Decided.Label != d.Label || last.Decided.TxnID != d.TxnID {
		return decidesAgain
	}
	return decidesNothing
}

// startTotals returns a copy of the totals before the next evidence
// record. A scope without totals (its first record, or the first since an
// upgrade from a doris-sink without them) starts from what the store
// knows: from checkpoint 1 when it decided nothing yet, else from the
// first checkpoint whose commit is still to be recorded (the last
// decided one when not all its txns are committed, the next otherwise).
func (s *Store) startTotals() EvidenceTotals {
	if s.totals != nil {
		return s.totals.Clone()
	}
	t := EvidenceTotals{Since: 1, Tables: map[string]TableTotals{}}
	if s.last != nil && s.last.Decided != nil {
		d := s.last.Decided
		t.Since = d.ID + 1
		if len(d.Txns) == 0 && !d.Committed {
			t.Since = d.ID // the single-table form: one txn, the decision's
		}
		for _, x := range d.Txns {
			if !x.Committed {
				t.Since = d.ID
			}
		}
	}
	return t
}

// write encodes st with doc's source info and commits it, with extra
// records and the evidence records of entries in the same transaction.
func (s *Store) write(ctx context.Context, st *checkpoint.State, doc document, offs *Offsets, extra Extra, entries []ledger.Entry) error {
	b, err := checkpoint.Encode(st)
	if err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	doc.Format, doc.Version, doc.Checkpoint = StoreFormatName, StoreFormatVersion, compact.Bytes()
	doc.Source.Slots = docSlots(s.slots)
	if err := s.recordTopicIDs(ctx, st, &doc); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	if doc.DeadLetters != nil {
		doc.DeadLetters.fillTopicIDs(s.tids)
	}
	if offs != nil {
		setTopicID(offs, s.tids)
		for i := range offs.Others {
			setTopicID(&offs.Others[i], s.tids)
		}
	}
	v, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	letters := len(extra.Records)
	if len(entries) > 0 {
		base := EvidenceRecord{Job: s.owner.Job, Writer: EvidenceWriterSlot, Scope: s.owner.Writer, Slots: docSlots(s.slots),
			TopicIDs: doc.Source.ids()}
		if s.last != nil && s.last.Decided != nil {
			base.Previous = s.last.Decided.ID
		}
		totals := s.startTotals()
		recs, err := evidenceRecords(base, s.log.inc.Token, entries, s.log.evMax, totals)
		if err != nil {
			return fmt.Errorf("save checkpoint state: %w", err)
		}
		extra.Records = append(slices.Clone(extra.Records), recs...)
		extra.TopicBytes = map[string]int64{EvidenceTopic(s.owner.Job): s.log.evMax}
	}
	if err := s.log.CommitWith(ctx, v, offs, extra); err != nil {
		if letters > 0 {
			return fmt.Errorf("save checkpoint state with %d dead letters: %w", letters, err)
		}
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	if len(entries) > 0 {
		t := s.startTotals()
		t.Add(entries)
		s.totals = &t
	}
	s.last, s.doc = st.Clone(), doc
	return nil
}

// recordTopicIDs sets doc's source info to the topics the positions of st
// (its decided end, else doc's first start, else the configured topics)
// name and their current topic IDs: Topic and TopicID for one topic (the
// form before kafka.topics), TopicIDs for several.
func (s *Store) recordTopicIDs(ctx context.Context, st *checkpoint.State, doc *document) error {
	names := s.topics
	raw := doc.Source.FirstStart
	if st.Decided != nil && len(st.Decided.End) > 0 {
		raw = st.Decided.End
	}
	if pos, ok, err := kafka.ParsePosition(raw); err == nil && ok && len(pos.TopicNames()) > 0 {
		names = pos.TopicNames()
	}
	ids := make(map[string]string, len(names))
	for _, t := range names {
		id, err := s.topicID(ctx, t)
		if err != nil {
			return err
		}
		ids[t] = id
	}
	doc.Source.Topic, doc.Source.TopicID, doc.Source.TopicIDs = "", "", nil
	if len(names) == 1 {
		doc.Source.Topic, doc.Source.TopicID = names[0], ids[names[0]]
	} else if len(names) > 1 {
		doc.Source.TopicIDs = ids
	}
	return nil
}

// setTopicID fills o.TopicID from ids (hex) when known.
func setTopicID(o *Offsets, ids map[string]string) {
	if id, err := hex.DecodeString(ids[o.Topic]); err == nil && len(id) == 16 {
		copy(o.TopicID[:], id)
	}
}

// FirstStart returns the persisted first-start position of the last state
// loaded or saved.
func (s *Store) FirstStart(context.Context) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.doc.Source.FirstStart) == 0 {
		return nil, false, nil
	}
	return bytes.Clone(s.doc.Source.FirstStart), true, nil
}

// SaveFirstStart persists raw (the resolved first-start position) with the
// current state, in one transaction, before the first record is read.
func (s *Store) SaveFirstStart(ctx context.Context, raw []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		return errors.New("save first start: the store was not loaded")
	}
	doc := s.doc
	doc.Source.FirstStart = bytes.Clone(raw)
	if err := s.write(ctx, s.last, doc, nil, Extra{}, nil); err != nil {
		return fmt.Errorf("first start %s: %w", raw, err)
	}
	return nil
}

// Close closes the log. Idempotent.
func (s *Store) Close() error {
	s.log.Close()
	return nil
}
