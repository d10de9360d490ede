package kafka

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrUnrouted is wrapped by the *RecordError of a record that no routing
// rule sends to a table: it goes to the dead-letter topic when one is set,
// else Run stops with it, naming the record's topic-partition-offset. Such
// a record is never dropped.
var ErrUnrouted = errors.New("the record routes to no table")

// MaxTableNameLen is the longest table name routing produces: Doris's
// table_name_length_limit default (fe Config, checked by
// FeNameFormat.checkTableName).
const MaxTableNameLen = 64

// Routing picks the target table of each record (routing.*). Rules are
// tried in this order and the first that names a table wins; a record
// none names is unrouted (ErrUnrouted). The zero value is off: every
// record goes to the sink's own table (Sink.Write).
//
// A table is "db.table" or a table of the loader's database (doris.database).
type Routing struct {
	// TopicTables maps a topic to its table (routing.topic_tables).
	TopicTables map[string]string
	// TableField names a top-level field of the record value whose
	// string value is the table (routing.table_field): of the JSON value,
	// or of the value decoded through the registry for the registry
	// formats (with EnvelopeDebezium, of the decoded change event). Not
	// with FormatCSV.
	TableField string
	// TableHeader names a record header whose value is the table
	// (routing.table_header).
	TableHeader string
	// DebeziumTemplate builds the table from a Debezium change event's
	// source.db and source.table (in "payload" too, for the JSON converter
	// with schemas; for a registry format with EnvelopeDebezium, of the
	// decoded event): "{db}" and "{table}" are replaced by them, sanitised
	// to a Doris table name (SanitizeTableName), e.g. "{db}_{table}"
	// (routing.debezium_template).
	DebeziumTemplate string
	// DefaultTable is the table of a record no other rule routes
	// (routing.default_table, typically doris.table). Empty: such a
	// record is unrouted.
	DefaultTable string
}

// Enabled reports whether any rule is set.
func (r *Routing) Enabled() bool {
	return len(r.TopicTables) > 0 || r.TableField != "" || r.TableHeader != "" || r.DebeziumTemplate != "" ||
		r.DefaultTable != ""
}

// validate checks the rules; errors name the keys.
func (r *Routing) validate() error {
	var errs []error
	for topic, table := range r.TopicTables {
		if err := checkTableRef(table); err != nil {
			errs = append(errs, fmt.Errorf("routing.topic_tables.%s: %w", topic, err))
		}
	}
	if t := r.DebeziumTemplate; t != "" && !strings.Contains(t, "{table}") {
		errs = append(errs, fmt.Errorf("routing.debezium_template %q: must contain {table} (and may contain {db})", t))
	}
	if r.DefaultTable != "" {
		if err := checkTableRef(r.DefaultTable); err != nil {
			errs = append(errs, fmt.Errorf("routing.default_table: %w", err))
		}
	}
	return errors.Join(errs...)
}

// route returns the table of r, whose value is the JSON v (r.Value, or
// for the registry formats its decoded form: Converter.decode), or an
// error wrapping ErrUnrouted (no rule names a table) or naming the rule
// whose table name is invalid.
func (ro *Routing) route(r *kgo.Record, v []byte) (string, error) {
	if t, ok := ro.TopicTables[r.Topic]; ok {
		return t, nil
	}
	if f := ro.TableField; f != "" {
		if t, ok := topField(v, f); ok {
			if err := checkTableRef(t); err != nil {
				return "", fmt.Errorf("routing.table_field %q: %w", f, err)
			}
			return t, nil
		}
	}
	if h := ro.TableHeader; h != "" {
		for _, hd := range r.Headers {
			if hd.Key == h && len(hd.Value) > 0 {
				t := string(hd.Value)
				if err := checkTableRef(t); err != nil {
					return "", fmt.Errorf("routing.table_header %q: %w", h, err)
				}
				return t, nil
			}
		}
	}
	if tpl := ro.DebeziumTemplate; tpl != "" {
		db, table, ok := debeziumSourceCompact(v)
		if !ok {
			db, table, ok = debeziumSource(v)
		}
		if ok {
			name, err := SanitizeTableName(expandTemplate(tpl, db, table))
			if err != nil {
				return "", fmt.Errorf("routing.debezium_template %q (source.db %q, source.table %q): %w", tpl, db, table, err)
			}
			return name, nil
		}
	}
	if ro.DefaultTable != "" {
		return ro.DefaultTable, nil
	}
	return "", fmt.Errorf("%w (topic %q; rules: %s)", ErrUnrouted, r.Topic, ro.describe())
}

// describe lists the configured rules for an unrouted record's error.
func (ro *Routing) describe() string {
	var rules []string
	if len(ro.TopicTables) > 0 {
		rules = append(rules, "routing.topic_tables has no entry for the topic")
	}
	if ro.TableField != "" {
		rules = append(rules, fmt.Sprintf("no string field %q", ro.TableField))
	}
	if ro.TableHeader != "" {
		rules = append(rules, fmt.Sprintf("no header %q", ro.TableHeader))
	}
	if ro.DebeziumTemplate != "" {
		rules = append(rules, "no Debezium source.table")
	}
	rules = append(rules, "no routing.default_table")
	return strings.Join(rules, ", ")
}

// topField returns the string value of top-level field f of the JSON
// object v.
func topField(v []byte, f string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return "", false
	}
	var s string
	if raw, ok := obj[f]; !ok || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", false
	}
	return s, true
}

// debeziumSource returns source.db and source.table of a Debezium change
// event (or of its "payload", the JSON converter with schemas enabled).
func debeziumSource(v []byte) (db, table string, ok bool) {
	var ev struct {
		Source *struct {
			DB    string `json:"db"`
			Table string `json:"table"`
		} `json:"source"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(v, &ev) != nil {
		return "", "", false
	}
	if ev.Source == nil && len(ev.Payload) > 0 {
		return debeziumSource(ev.Payload)
	}
	if ev.Source == nil || ev.Source.Table == "" {
		return "", "", false
	}
	return ev.Source.DB, ev.Source.Table, true
}

// SanitizeTableName turns s into a name Doris accepts as a table name
// (fe FeNameFormat TABLE_NAME_REGEX ^[a-zA-Z][a-zA-Z0-9-_]*$, at most
// MaxTableNameLen characters): every other character becomes "_", and a
// name not starting with a letter gets the prefix "t_". A name still too
// long is refused (truncating could send two source tables to one).
func SanitizeTableName(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty table name")
	}
	b := []byte(s)
	for i, c := range b {
		if !isNameByte(c) {
			b[i] = '_'
		}
	}
	if c := b[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		b = append([]byte("t_"), b...)
	}
	if len(b) > MaxTableNameLen {
		return "", fmt.Errorf("table name %q is %d characters, Doris allows %d (table_name_length_limit)", b, len(b), MaxTableNameLen)
	}
	return string(b), nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// checkTableRef checks a routed "db.table" or "table" is a name Doris
// accepts (FeNameFormat: db ^[a-zA-Z][a-zA-Z0-9-_]{0,63}$, table as
// SanitizeTableName leaves it).
func checkTableRef(ref string) error {
	db, table, qualified := strings.Cut(ref, ".")
	if !qualified {
		db, table = "", ref
	}
	if qualified {
		if err := checkName("database", db); err != nil {
			return fmt.Errorf("table %q: %w", ref, err)
		}
	}
	if err := checkName("table", table); err != nil {
		return fmt.Errorf("table %q: %w", ref, err)
	}
	return nil
}

func checkName(what, s string) error {
	if s == "" || len(s) > MaxTableNameLen {
		return fmt.Errorf("%s name %q: want 1 to %d characters", what, s, MaxTableNameLen)
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return fmt.Errorf("%s name %q must start with a letter", what, s)
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return fmt.Errorf("%s name %q: character %q is not allowed (want [A-Za-z0-9_-])", what, s, s[i])
		}
	}
	return nil
}
