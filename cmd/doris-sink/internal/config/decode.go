package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// decoder reads typed values from a flat koanf map, collecting errors that
// name the key (and the Flink alias that set it, if any).
type decoder struct {
	flat   map[string]any
	origin map[string]string
	errs   errList
}

func (d *decoder) fail(key string, v any, allowed string) {
	name := key
	if a, ok := d.origin[key]; ok {
		name = key + " (set by " + a + ")"
	}
	val := doris.Redact(fmt.Sprint(v))
	if k, ok := lookupKey(key); ok && k.Secret {
		val = Redaction
	}
	d.errs.add(&KeyError{Key: name, Value: val, Allowed: allowed})
}

func scalar(v any) (string, bool) {
	switch v.(type) {
	case map[string]any, []any, []string:
		return "", false
	case nil:
		return "", true
	}
	return fmt.Sprint(v), true
}

func (d *decoder) str(key string) string {
	v := d.flat[key]
	s, ok := scalar(v)
	if !ok {
		d.fail(key, v, "want a string")
	}
	return strings.TrimSpace(s)
}

func (d *decoder) list(key string) []string {
	switch t := d.flat[key].(type) {
	case nil:
		return nil
	case []string:
		var out []string
		for _, e := range t {
			out = append(out, splitList(e)...)
		}
		return out
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := scalar(e)
			if !ok {
				d.fail(key, t, "want a list of strings")
				return nil
			}
			out = append(out, strings.TrimSpace(s))
		}
		return out
	case string:
		return splitList(t)
	default:
		d.fail(key, t, "want a list of strings or a comma list")
		return nil
	}
}

func (d *decoder) boolean(key string) bool {
	switch t := d.flat[key].(type) {
	case bool:
		return t
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(t))
		if err == nil {
			return b
		}
	}
	d.fail(key, d.flat[key], "want true or false")
	return false
}

// subLoads reads doris.sub_loads: an integer, or auto (K starts at 1).
func (d *decoder) subLoads() int {
	if strings.EqualFold(d.str("doris.sub_loads"), "auto") {
		return 1
	}
	return int(d.integer("doris.sub_loads"))
}

func (d *decoder) integer(key string) int64 {
	switch t := d.flat[key].(type) {
	case int:
		return int64(t)
	case int64:
		return t
	case uint64:
		if t <= math.MaxInt64 {
			return int64(t)
		}
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t)
		}
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		if err == nil {
			return n
		}
	}
	d.fail(key, d.flat[key], "want an integer")
	return 0
}

func (d *decoder) duration(key string) time.Duration {
	v := d.flat[key]
	if s, ok := v.(string); ok {
		dur, err := ParseDuration(s)
		if err == nil {
			return dur
		}
	}
	if dur, ok := v.(time.Duration); ok {
		return dur
	}
	if n, ok := v.(int); ok { // a bare YAML integer is milliseconds, like "10" (ParseDuration)
		return time.Duration(n) * time.Millisecond
	}
	d.fail(key, v, "want a duration like 500ms, 10s, 1m (Flink forms 10 s, 1min accepted)")
	return 0
}

func (d *decoder) size(key string) ByteSize {
	switch t := d.flat[key].(type) {
	case int, int64, float64:
		n := d.integer(key)
		if n >= 0 {
			return ByteSize(n)
		}
	case string:
		b, err := ParseSize(t)
		if err == nil {
			return b
		}
	}
	d.fail(key, d.flat[key], "want a size like 256MiB, 1GiB, 64MB or a byte count")
	return 0
}

// subMap collects the flat keys under prefix key as a string map.
func (d *decoder) subMap(key string) map[string]string {
	var out map[string]string
	p := key + "."
	for k, v := range d.flat {
		rest, ok := strings.CutPrefix(k, p)
		if !ok {
			continue
		}
		s, ok := scalar(v)
		if !ok {
			d.fail(k, v, "want a string value")
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[rest] = s
	}
	if v, ok := d.flat[key]; ok && v != nil {
		if m, isMap := v.(map[string]any); !isMap || len(m) != 0 {
			d.fail(key, v, "want a map of name: value")
		}
	}
	return out
}

func (d *decoder) start() Start {
	if v, ok := d.flat["kafka.start"]; ok {
		s, ok := scalar(v)
		if ok {
			return Start{Mode: strings.TrimSpace(s)}
		}
	}
	st := Start{Mode: StartExplicit, Offsets: map[int32]int64{}}
	var parts []string
	for k := range d.flat {
		if strings.HasPrefix(k, "kafka.start.") {
			parts = append(parts, k)
		}
	}
	sort.Strings(parts)
	for _, k := range parts {
		p, err := strconv.ParseInt(strings.TrimPrefix(k, "kafka.start."), 10, 32)
		if err != nil || p < 0 {
			d.fail(k, strings.TrimPrefix(k, "kafka.start."), "want a map of partition number (≥ 0) to offset")
			continue
		}
		before := len(d.errs)
		off := d.integer(k)
		if len(d.errs) == before && off < 0 {
			d.fail(k, off, "want an offset ≥ 0")
		}
		st.Offsets[int32(p)] = off
	}
	if len(st.Offsets) == 0 {
		return Start{Mode: StartEarliest}
	}
	return st
}

// decode converts the merged flat map into a Config.
func decode(flat map[string]any, origin map[string]string) (*Config, error) {
	d := &decoder{flat: flat, origin: origin}
	c := &Config{
		Job: Job{Name: d.str("job.name"), DataDir: d.str("job.data_dir"), Coordinator: strings.ToLower(d.str("job.coordinator")),
			Slots: int(d.integer("job.slots")), Instance: d.str("job.instance")},
		Kafka: Kafka{
			Brokers:    d.list("kafka.brokers"),
			Topic:      d.str("kafka.topic"),
			Topics:     d.list("kafka.topics"),
			TopicRegex: d.str("kafka.topic_regex"),
			Group:      d.str("kafka.group"),
			Start:      d.start(),
			TLS: TLS{
				Enabled:    d.boolean("kafka.tls.enabled"),
				CAFile:     d.str("kafka.tls.ca_file"),
				CertFile:   d.str("kafka.tls.cert_file"),
				KeyFile:    d.str("kafka.tls.key_file"),
				ServerName: d.str("kafka.tls.server_name"),
			},
			SASL: SASL{
				Mechanism:    strings.ToLower(d.str("kafka.sasl.mechanism")),
				User:         d.str("kafka.sasl.user"),
				Password:     Secret(d.str("kafka.sasl.password")),
				PasswordFile: d.str("kafka.sasl.password_file"),
			},
			SessionTimeout:   d.duration("kafka.session_timeout"),
			RebalanceTimeout: d.duration("kafka.rebalance_timeout"),
		},
		Doris: Doris{
			FE:           d.list("doris.fe"),
			BE:           d.list("doris.be"),
			MySQL:        d.str("doris.mysql"),
			User:         d.str("doris.user"),
			Password:     Secret(d.str("doris.password")),
			PasswordFile: d.str("doris.password_file"),
			Database:     d.str("doris.database"),
			Table:        d.str("doris.table"),
			Format:       strings.ToLower(d.str("doris.format")),
			Properties:   d.subMap("doris.properties"),
			TLS:          DorisTLS{CAFile: d.str("doris.tls.ca_file")},

			MySQLTLS:               strings.ToLower(d.str("doris.mysql_tls")),
			MySQLAllowInsecureAuth: d.boolean("doris.mysql_allow_insecure_auth"),
			RedirectAllowHosts:     d.list("doris.redirect_allow_hosts"),
			RedirectAllowHTTP:      d.boolean("doris.redirect_allow_http"),
			SubLoads:               d.subLoads(),
			SubLoadsAuto:           strings.EqualFold(d.str("doris.sub_loads"), "auto"),
			SubLoadsMax:            int(d.integer("doris.sub_loads_max")),
			BESpread:               strings.ToLower(d.str("doris.be_spread")),
			CreateTable:            decodeCreateTable(d),
		},
		Delivery: Delivery{
			Guarantee:          strings.ToLower(canonicalGuarantee(d.str("delivery.guarantee"))),
			CheckpointInterval: d.duration("delivery.checkpoint_interval"),
			CheckpointMaxBytes: d.size("delivery.checkpoint_max_bytes"),
			CheckpointMaxRows:  d.integer("delivery.checkpoint_max_rows"),
			BatchMode:          d.boolean("delivery.batch_mode"),
			FailFastAfter:      d.duration("delivery.fail_fast_after"),
			RetryBackoffMax:    d.duration("delivery.retry_backoff_max"),
		},
		Records: Records{
			Format:                   strings.ToLower(d.str("records.format")),
			MetadataColumns:          d.subMap("records.metadata_columns"),
			DeadLetterTopic:          d.str("records.dead_letter_topic"),
			DeadLetterDelivery:       strings.ToLower(d.str("records.dead_letter_delivery")),
			DeadLetterCreate:         d.boolean("records.dead_letter_create"),
			DeadLetterBufferBytes:    int64(d.size("records.dead_letter_buffer_bytes")),
			DeadLetterMaxBisectLoads: int(d.integer("records.dead_letter_max_bisect_loads")),
			Delete:                   decodeDelete(d),
			SchemaEvolution:          strings.ToLower(d.str("records.schema_evolution")),
			Envelope:                 strings.ToLower(d.str("records.envelope")),
			MaxRowBytes:              int64(d.size("records.max_row_bytes")),
			MaxKeyBytes:              int64(d.size("records.max_key_bytes")),
			MaxHeadersBytes:          int64(d.size("records.max_headers_bytes")),
			TimeZoneName:             d.str("records.time_zone"),
			SchemaRegistry:           decodeSchemaRegistry(d),
			JSONSchema:               JSONSchemaRecords{Validate: d.boolean("records.json_schema.validate")},
		},
		Routing: Routing{
			TopicTables:      d.subMap("routing.topic_tables"),
			TableField:       d.str("routing.table_field"),
			TableHeader:      d.str("routing.table_header"),
			DebeziumTemplate: d.str("routing.debezium_template"),
			DefaultTable:     d.str("routing.default_table"),
		},
		Tables:  decodeTables(d),
		Metrics: Metrics{Listen: d.str("metrics.listen"), LogInterval: d.duration("metrics.log_interval")},
		Log:     Log{Level: strings.ToLower(d.str("log.level")), Format: strings.ToLower(d.str("log.format"))},
	}
	c.Kafka.MaxDecompressedBatchBytes = int64(d.size("kafka.max_decompressed_batch_bytes"))
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	return c, nil
}
