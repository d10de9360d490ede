package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Checker verifies a campaign from the outside: it trusts neither the sink
// nor its logs. The produced history comes from Kafka (the topic read from
// its start by a plain kgo client), the table contents and transaction
// states from Doris over the MySQL protocol (go-sql-driver/mysql), and
// the sinks' evidence from the job's evidence topic (coordlog.ReadEvidence),
// or their ledgers (ledger.ReadFile) when it has none. The zero value
// is not usable; fill every field.
type Checker struct {
	// Brokers is the Kafka seed address.
	Brokers string
	// MySQL is the Doris FE MySQL address; User its user (no password).
	MySQL, User string
	// EventsTables are the tables the events sink loads (routed, see
	// Config.RoutedTables); nil means EventsTable alone.
	EventsTables []string
	// Events and State are the sinks loading EventsTable and StateTable;
	// either may be nil.
	Events, State *Sink
	// ExactlyOnce makes duplicates and ledger row mismatches violations.
	ExactlyOnce bool
	// Topics are the source topics (Config.SourceTopics); nil means Topic.
	Topics []string
	// Registry is the Schema Registry URL of an Avro topic (FormatAvro):
	// values are decoded through it; "" reads JSON values.
	Registry string
	// Format is FormatProtobuf when Registry serves a Protobuf topic; ""
	// means Avro.
	Format string
}

// Report is the checker's verdict. Violations lists what breaks "nothing
// lost, nothing twice"; the counts are the published figures.
type Report struct {
	// Produced counts valid events in Kafka; Malformed the malformed ones;
	// Keys the distinct keys.
	Produced, Malformed, Keys int
	// EventsRows and StateRows are the tables' row counts.
	EventsRows, StateRows int
	// Lost: produced events missing from the events table, plus keys
	// missing from the state table.
	Lost int
	// Duplicated: extra copies of an event in the events table.
	Duplicated int
	// Stale: state rows older than their key's newest produced version.
	Stale int
	// Corrupt: rows whose checksum or payload does not match the produced
	// event; Unexpected: rows of events never produced.
	Corrupt, Unexpected int
	// DeadLetterMissing: malformed records absent from the dead-letter
	// topic.
	DeadLetterMissing int
	// Lingering: PREPARE or PRECOMMITTED transactions left in Doris.
	Lingering int
	// LedgerMismatch: committed ledger labels Doris shows in another state,
	// plus ledger row totals that differ from the table.
	LedgerMismatch int
	// LedgerExpired: committed ledger labels Doris no longer knows (label
	// retention; informational, not a violation).
	LedgerExpired int
	// Healed and Resolved count ledger "healed" and "resolved" entries.
	Healed, Resolved int
	// Details describes the first violations found.
	Details []string
}

// Violations is the number of broken promises: every count that must be
// zero (duplicates only in exactly-once mode).
func (r *Report) Violations(exactlyOnce bool) int {
	n := r.Lost + r.Stale + r.Corrupt + r.Unexpected + r.DeadLetterMissing + r.Lingering + r.LedgerMismatch
	if exactlyOnce {
		n += r.Duplicated
	}
	return n
}

func (r *Report) detail(format string, args ...any) {
	if len(r.Details) < 20 {
		r.Details = append(r.Details, fmt.Sprintf(format, args...))
	}
}

// String is a one-line summary.
func (r *Report) String() string {
	s := fmt.Sprintf("produced=%d malformed=%d keys=%d events_rows=%d state_rows=%d lost=%d duplicated=%d stale=%d "+
		"corrupt=%d unexpected=%d dlq_missing=%d lingering=%d ledger_mismatch=%d ledger_expired=%d healed=%d resolved=%d",
		r.Produced, r.Malformed, r.Keys, r.EventsRows, r.StateRows, r.Lost, r.Duplicated, r.Stale, r.Corrupt, r.Unexpected,
		r.DeadLetterMissing, r.Lingering, r.LedgerMismatch, r.LedgerExpired, r.Healed, r.Resolved)
	if len(r.Details) > 0 {
		s += "\n  " + strings.Join(r.Details, "\n  ")
	}
	return s
}

// Check reads everything and compares.
func (c *Checker) Check(ctx context.Context) (*Report, error) {
	r := &Report{}
	topics := c.Topics
	if len(topics) == 0 {
		topics = []string{Topic}
	}
	var values [][]byte
	for _, t := range topics {
		vs, err := ReadTopic(ctx, c.Brokers, t)
		if err != nil {
			return nil, err
		}
		values = append(values, vs...)
	}
	produced := map[int64]Event{}
	byKeyVer := map[[2]int64]Event{}
	maxVer := map[int64]int64{}
	var (
		malformed []string
		events    []Event
	)
	if c.Registry != "" {
		var err error
		if events, malformed, err = avroEvents(ctx, c.Registry, c.Format, values); err != nil {
			return nil, err
		}
	}
	for _, v := range values {
		if c.Registry != "" {
			break
		}
		var e Event
		if err := json.Unmarshal(v, &e); err != nil || e.EID == 0 {
			malformed = append(malformed, string(v))
			continue
		}
		events = append(events, e)
	}
	for _, e := range events {
		produced[e.EID] = e
		byKeyVer[[2]int64{e.K, e.Ver}] = e
		maxVer[e.K] = max(maxVer[e.K], e.Ver)
	}
	r.Produced, r.Malformed, r.Keys = len(produced), len(malformed), len(maxVer)
	if len(malformed) > 0 {
		dlq, err := ReadTopic(ctx, c.Brokers, DeadLetterTopic)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, v := range dlq {
			seen[string(v)] = true
		}
		for _, m := range malformed {
			if !seen[m] {
				r.DeadLetterMissing++
				r.detail("malformed record %q is neither loaded nor in %s", m, DeadLetterTopic)
			}
		}
	}
	db, err := sql.Open("mysql", (&mysql.Config{User: c.User, Net: "tcp", Addr: c.MySQL, DBName: Database,
		AllowNativePasswords: true, Timeout: 10 * time.Second}).FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("open mysql %s: %w", c.MySQL, err)
	}
	defer db.Close()
	if c.Events != nil {
		if err := c.checkEvents(ctx, db, produced, r); err != nil {
			return nil, err
		}
	}
	if c.State != nil {
		if err := c.checkState(ctx, db, maxVer, byKeyVer, r); err != nil {
			return nil, err
		}
	}
	for _, st := range []string{"prepare", "precommitted"} {
		txns, err := showTxns(ctx, db, "status = '"+st+"'")
		if err != nil {
			return nil, err
		}
		for _, t := range txns {
			r.Lingering++
			r.detail("transaction %d label %s is %s", t.id, t.label, t.status)
		}
	}
	for _, s := range []*Sink{c.Events, c.State} {
		if s == nil {
			continue
		}
		// Row totals are compared in exactly-once mode only: at-least-once
		// appends its evidence after the load, so a crash between them
		// leaves rows the ledger never saw.
		want := int64(-1)
		switch {
		case !c.ExactlyOnce:
		case s.Table == EventsTable:
			want = int64(r.EventsRows)
		default: // a UNIQUE table holds one row per key: compare with the history
			want = int64(r.Produced)
		}
		if err := c.checkLedger(ctx, db, s, want, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (c *Checker) checkEvents(ctx context.Context, db *sql.DB, produced map[int64]Event, r *Report) error {
	tables := c.EventsTables
	if len(tables) == 0 {
		tables = []string{EventsTable}
	}
	count := map[int64]int{}
	for _, table := range tables {
		if err := c.readEvents(ctx, db, table, len(tables), produced, count, r); err != nil {
			return err
		}
	}
	for eid := range produced {
		switch n := count[eid]; {
		case n == 0:
			r.Lost++
			r.detail("events: eid %d lost", eid)
		case n > 1:
			r.Duplicated += n - 1
			r.detail("events: eid %d loaded %d times", eid, n)
		}
	}
	return nil
}

// readEvents counts the rows of one events table (of n routed tables) by
// eid; a row in a table its event does not route to is unexpected.
func (c *Checker) readEvents(ctx context.Context, db *sql.DB, table string, n int, produced map[int64]Event,
	count map[int64]int, r *Report) error {
	rows, err := db.QueryContext(ctx, "SELECT eid, k, ver, payload, sum FROM "+table)
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.EID, &e.K, &e.Ver, &e.Payload, &e.Sum); err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		r.EventsRows++
		count[e.EID]++
		p, ok := produced[e.EID]
		switch {
		case !ok:
			r.Unexpected++
			r.detail("%s: row eid %d was never produced", table, e.EID)
		case p != e || !e.Valid():
			r.Corrupt++
			r.detail("%s: row %+v differs from produced %+v", table, e, p)
		case n > 1 && RoutedTable(e.EID, n) != table:
			r.Unexpected++
			r.detail("%s: row eid %d routes to %s", table, e.EID, RoutedTable(e.EID, n))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	return nil
}

func (c *Checker) checkState(ctx context.Context, db *sql.DB, maxVer map[int64]int64, byKeyVer map[[2]int64]Event, r *Report) error {
	rows, err := db.QueryContext(ctx, "SELECT k, ver, eid, payload, sum FROM "+StateTable)
	if err != nil {
		return fmt.Errorf("read %s: %w", StateTable, err)
	}
	defer rows.Close()
	seen := map[int64]bool{}
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.K, &e.Ver, &e.EID, &e.Payload, &e.Sum); err != nil {
			return fmt.Errorf("read %s: %w", StateTable, err)
		}
		r.StateRows++
		seen[e.K] = true
		p, ok := byKeyVer[[2]int64{e.K, e.Ver}]
		switch {
		case !ok:
			r.Unexpected++
			r.detail("state: row k=%d ver=%d was never produced", e.K, e.Ver)
		case p != e || !e.Valid():
			r.Corrupt++
			r.detail("state: row %+v differs from produced %+v", e, p)
		case e.Ver < maxVer[e.K]:
			r.Stale++
			r.detail("state: key %d holds version %d, newest produced is %d", e.K, e.Ver, maxVer[e.K])
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", StateTable, err)
	}
	for k := range maxVer {
		if !seen[k] {
			r.Lost++
			r.detail("state: key %d missing", k)
		}
	}
	return nil
}

// checkLedger compares s's ledger with Doris: every committed label must
// be VISIBLE (or forgotten by label retention), and the rows of committed
// labels must add up to wantRows (-1: not compared).
func (c *Checker) checkLedger(ctx context.Context, db *sql.DB, s *Sink, wantRows int64, r *Report) error {
	entries, err := c.evidence(ctx, s)
	if err != nil {
		return fmt.Errorf("sink %s: %w", s.Name, err)
	}
	txns, err := showTxns(ctx, db, "label LIKE '"+s.Name+":%'")
	if err != nil {
		return err
	}
	state := map[string]string{}
	for _, t := range txns { // newest first: keep each label's latest txn
		if _, ok := state[t.label]; !ok {
			state[t.label] = t.status
		}
	}
	rows := map[string]int64{}
	committed := map[string]bool{}
	for _, e := range entries {
		switch e.Event {
		case ledger.EventDecided, ledger.EventHealed:
			rows[e.Label] = e.RowsLoaded
			if e.Event == ledger.EventHealed {
				r.Healed++
			}
		case ledger.EventCommitted:
			committed[e.Label] = true
			if e.RowsTotal > 0 {
				rows[e.Label] = e.RowsLoaded
			}
		case ledger.EventResolved:
			r.Resolved++
			if strings.Contains(e.Note, "assumed visible") {
				committed[e.Label] = true
			}
		}
	}
	var total int64
	for l := range committed {
		total += rows[l]
		switch st, ok := state[l]; {
		case !ok:
			r.LedgerExpired++
		case st != "VISIBLE":
			r.LedgerMismatch++
			r.detail("ledger %s: label %s committed, Doris says %s", s.Name, l, st)
		}
	}
	if wantRows >= 0 && total != wantRows {
		r.LedgerMismatch++
		r.detail("ledger %s: committed rows %d, want %d", s.Name, total, wantRows)
	}
	return nil
}

// evidence returns s's evidence entries: from the job's evidence topic
// (every writer scope's, read_committed; job.coordinator kafka), else
// from its local ledgers (readLedgers; job.coordinator file has no
// evidence topic).
func (c *Checker) evidence(ctx context.Context, s *Sink) ([]ledger.Entry, error) {
	el, err := coordlog.ReadEvidence(ctx, s.Name, []kgo.Opt{kgo.SeedBrokers(c.Brokers)}, coordlog.EvidenceReadOptions{})
	if errors.Is(err, fs.ErrNotExist) {
		return readLedgers(s.DataDir)
	}
	if err != nil {
		return nil, err
	}
	var all []ledger.Entry
	for _, sc := range el.Scopes() {
		all = append(all, el.EntriesOf(sc)...)
	}
	return all, nil
}

// readLedgers returns the entries of every ledger under dir: dir's own
// (a standalone job) and, for a group-mode job whose members each have a
// data dir (and a ledger per slot) below dir, all of theirs. A label
// appears in several ledgers when a slot moved between members; the
// entries agree on its rows.
func readLedgers(dir string) ([]ledger.Entry, error) {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == ledger.FileName {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil || len(dirs) == 0 {
		entries, _, rerr := ledger.ReadFile(dir) // the error names the missing ledger
		return entries, rerr
	}
	var all []ledger.Entry
	for _, d := range dirs {
		entries, _, err := ledger.ReadFile(d)
		if err != nil {
			return nil, err
		}
		all = append(all, entries...)
	}
	return all, nil
}

type txnRow struct {
	id            int64
	label, status string
}

// showTxns runs SHOW TRANSACTION FROM Database WHERE where (docs/doris-facts.md
// §6.2); "does not exist" answers are an empty list.
func showTxns(ctx context.Context, db *sql.DB, where string) ([]txnRow, error) {
	rows, err := db.QueryContext(ctx, "SHOW TRANSACTION FROM "+Database+" WHERE "+where)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && strings.Contains(me.Message, "does not exist") {
			return nil, nil
		}
		return nil, fmt.Errorf("show transaction where %s: %w", where, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []txnRow
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("show transaction: %w", err)
		}
		var t txnRow
		for i, col := range cols {
			switch col {
			case "TransactionId":
				fmt.Sscan(vals[i].String, &t.id)
			case "Label":
				t.label = vals[i].String
			case "TransactionStatus":
				t.status = vals[i].String
			}
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ReadTopic returns every committed record value of topic (read_committed,
// without control records), read from the start of each partition up to
// its end offset at the time of the call.
func ReadTopic(ctx context.Context, brokers, topic string) ([][]byte, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return nil, fmt.Errorf("read topic %s: %w", topic, err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("read topic %s: end offsets: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("read topic %s: end offsets: %w", topic, err)
	}
	want := map[int32]int64{}
	parts := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
			parts[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if len(want) == 0 {
		return nil, nil
	}
	// read_committed: a dead-letter topic written in the decisions' Kafka
	// transactions (job.coordinator kafka) holds aborted records, which do
	// not count; control records are kept so that the end offset (often a
	// commit marker) is reached.
	cons, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return nil, fmt.Errorf("read topic %s: %w", topic, err)
	}
	defer cons.Close()
	var out [][]byte
	for len(want) > 0 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read topic %s: %w", topic, err)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if end, ok := want[rec.Partition]; ok && rec.Offset < end {
				if !rec.Attrs.IsControl() {
					out = append(out, rec.Value)
				}
				if rec.Offset+1 >= end {
					delete(want, rec.Partition)
				}
			}
		})
	}
	return out, nil
}
