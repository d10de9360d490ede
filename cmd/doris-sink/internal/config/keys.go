package config

import "slices"

// kind is how a key's value is read.
type kind int

const (
	kindString kind = iota
	kindList        // list of strings; env and flags accept a comma list
	kindBool
	kindInt
	kindDuration
	kindSize
	kindMap   // string → string map, sub-keys free
	kindStart // earliest|latest|committed or a partition → offset map
)

// Key describes one configuration key.
type Key struct {
	// Name is the dotted key, e.g. "delivery.checkpoint_interval".
	Name string
	kind kind
	// Default is the default value as written in YAML ("" for none).
	Default any
	// Doc says what the key does and what is allowed.
	Doc string
	// Secret keys are never logged or printed.
	Secret bool
}

// keys is the table of every configuration key. The defaults are safe for
// exactly-once (docs/design.md §1); job.name has none and is required.
var keys = []Key{
	{Name: "job.name", kind: kindString, Default: "", Doc: "job name and Stream Load label prefix, 1-49 of [A-Za-z0-9_-]; required"},
	{Name: "job.data_dir", kind: kindString, Default: "", Doc: "checkpoint store and ledger directory; default ./var/<job.name>"},
	{Name: "job.coordinator", kind: kindString, Default: CoordinatorKafka, Doc: "where run keeps the commit decisions: file (job.data_dir) or kafka (the compacted state topic doris-sink.state.<job.name>, fenced by Kafka transactions)"},
	{Name: "job.slots", kind: kindInt, Default: 1, Doc: "writer slots of the job, 1-1000: 1 is one writer (with job.coordinator kafka every further copy of the config is a ready standby that takes over when the writer dies or leaves); N ≥ 2, any number of processes share the N slots through consumer group kafka.group (the most that do work at once is N; the others stand by). Changing it needs `doris-sink checkpoint reslot`; needs job.coordinator kafka"},
	{Name: "job.instance", kind: kindString, Default: "", Doc: "static membership id of this process in the job's consumer group (Kafka group.instance.id): a restart within kafka.session_timeout keeps its slots without a rebalance; unique per process; empty: a random id created once in job.data_dir/instance-id (one process per job.data_dir)"},

	{Name: "kafka.brokers", kind: kindList, Default: []string{"127.0.0.1:9092"}, Doc: "seed brokers host:port"},
	{Name: "kafka.topic", kind: kindString, Default: "", Doc: "source topic; run needs it, kafka.topics or kafka.topic_regex (exactly one)"},
	{Name: "kafka.topics", kind: kindList, Default: []string{}, Doc: "source topics read together (one checkpoint covers all); kafka.topic is the one-topic spelling"},
	{Name: "kafka.topic_regex", kind: kindString, Default: "", Doc: "source topics by name: a Go regexp matched against the whole name; topics created later are found every minute at a checkpoint boundary and read from earliest; internal, state and dead-letter topics never match"},
	{Name: "kafka.group", kind: kindString, Default: "", Doc: "consumer group; default doris-sink-<job.name>"},
	{Name: "kafka.session_timeout", kind: kindDuration, Default: "45s", Doc: "group mode: how long a silent member (killed, paused, cut off) keeps its slots before the group moves them"},
	{Name: "kafka.rebalance_timeout", kind: kindDuration, Default: "60s", Doc: "group mode: how long a member may take to hand over a slot in a rebalance (finish or abort its open checkpoint); past it the checkpoint is left to the slot's next owner"},
	{Name: "kafka.start", kind: kindStart, Default: StartEarliest, Doc: "where a job with no checkpoint starts: earliest, latest, committed, or a map partition: offset"},
	{Name: "kafka.tls.enabled", kind: kindBool, Default: false, Doc: "TLS to the brokers (kafka.tls: true is accepted too)"},
	{Name: "kafka.tls.ca_file", kind: kindString, Default: "", Doc: "PEM CA bundle for the brokers; implies TLS"},
	{Name: "kafka.tls.cert_file", kind: kindString, Default: "", Doc: "PEM client certificate for mutual TLS, with kafka.tls.key_file; implies TLS"},
	{Name: "kafka.tls.key_file", kind: kindString, Default: "", Doc: "PEM private key of kafka.tls.cert_file; implies TLS"},
	{Name: "kafka.tls.server_name", kind: kindString, Default: "", Doc: "name the broker certificates are verified against (and SNI); default each broker's host; implies TLS"},
	{Name: "kafka.sasl.mechanism", kind: kindString, Default: "", Doc: "plain, scram-sha-256 or scram-sha-512; empty for none"},
	{Name: "kafka.sasl.user", kind: kindString, Default: "", Doc: "SASL user"},
	{Name: "kafka.sasl.password", kind: kindString, Default: "", Doc: "SASL password (prefer password_file or env)", Secret: true},
	{Name: "kafka.max_decompressed_batch_bytes", kind: kindSize, Default: "256MiB", Doc: "bound of what one fetched record batch may decompress to (a compression bomb); a batch past it stops run naming its partition and offsets"},
	{Name: "kafka.sasl.password_file", kind: kindString, Default: "", Doc: "file holding the SASL password"},

	{Name: "doris.fe", kind: kindList, Default: []string{"http://127.0.0.1:8030"}, Doc: "FE HTTP base URLs; host:port gets http://"},
	{Name: "doris.be", kind: kindList, Default: []string{}, Doc: "optional BE HTTP base URLs for direct Stream Load"},
	{Name: "doris.mysql", kind: kindString, Default: "127.0.0.1:9030", Doc: "FE MySQL protocol address host:port"},
	{Name: "doris.user", kind: kindString, Default: "root", Doc: "Doris user"},
	{Name: "doris.password", kind: kindString, Default: "", Doc: "Doris password (prefer password_file or env)", Secret: true},
	{Name: "doris.password_file", kind: kindString, Default: "", Doc: "file holding the Doris password"},
	{Name: "doris.database", kind: kindString, Default: "", Doc: "target database; required by run"},
	{Name: "doris.table", kind: kindString, Default: "", Doc: "target table; required by run"},
	{Name: "doris.format", kind: kindString, Default: "", Doc: "Stream Load format json or csv; default from records.format"},
	{Name: "doris.properties", kind: kindMap, Doc: "raw Stream Load headers (columns, where, max_filter_ratio, function_column.sequence_col, ...)"},
	{Name: "doris.tls.ca_file", kind: kindString, Default: "", Doc: "PEM CA bundle for https FE/BE and MySQL TLS"},
	{Name: "doris.mysql_tls", kind: kindString, Default: "", Doc: "MySQL TLS: required, preferred or off; default required when doris.tls.* is set, else off"},
	{Name: "doris.mysql_allow_insecure_auth", kind: kindBool, Default: false, Doc: "let the password cross plaintext MySQL (cleartext plugin, RSA with a key the server sends); default refused"},
	{Name: "doris.redirect_allow_hosts", kind: kindList, Default: []string{}, Doc: "extra hosts a 307 may send credentials to, beyond configured FE/BE, FE-listed BEs and the request's host; * for any"},
	{Name: "doris.create_table", kind: kindBool, Default: false, Doc: "create a missing table from the first record's Debezium schema (records.format debezium): Unique Key on the record key's fields, merge-on-write"},
	{Name: "doris.create_table_buckets", kind: kindInt, Default: 0, Doc: "buckets of a created table; 0 for BUCKETS AUTO"},
	{Name: "doris.create_table_replication", kind: kindInt, Default: 0, Doc: "replication_num of a created table; 0 for Doris's default"},
	{Name: "doris.sub_loads", kind: kindString, Default: 1, Doc: "parallel Stream Loads (2PC txns, each its own label) per table per checkpoint, 1 to 256, or auto (K from measured throughput: starts at 1, doubles up to doris.sub_loads_max while the loads are the bottleneck, halves when idle, between checkpoints); a record goes to sub-load partition mod K, all decided by the checkpoint's one decision"},
	{Name: "doris.sub_loads_max", kind: kindInt, Default: 8, Doc: "the largest K doris.sub_loads: auto may choose, 1 to 256"},
	{Name: "doris.be_spread", kind: kindString, Default: "fe", Doc: "how Stream Loads pick their BE without doris.be: fe (the FE's 307, round robin over its load-available BEs) or backends (sub-load s of checkpoint N straight to BE (s + N) mod n of the FE's /api/backends alive list: a table's sub-loads on distinct BEs)"},
	{Name: "doris.redirect_allow_http", kind: kindBool, Default: false, Doc: "let an https request follow a redirect to plain http (Doris FEs redirect to http BEs); default refused"},

	{Name: "delivery.guarantee", kind: kindString, Default: ExactlyOnce, Doc: "exactly-once or at-least-once"},
	{Name: "delivery.checkpoint_interval", kind: kindDuration, Default: "10s", Doc: "checkpoint barrier interval, at least 100ms and below 1h"},
	{Name: "delivery.checkpoint_max_bytes", kind: kindSize, Default: "256MiB", Doc: "checkpoint barrier by body size (e.g. 256MiB); 0 for none"},
	{Name: "delivery.checkpoint_max_rows", kind: kindInt, Default: 0, Doc: "checkpoint barrier by rows; 0 for none"},
	{Name: "delivery.batch_mode", kind: kindBool, Default: false, Doc: "not implemented: refused when true (batch flushes not bound to checkpoints)"},
	{Name: "delivery.fail_fast_after", kind: kindDuration, Default: "30s", Doc: "how long a failure no retry can fix (unknown database/table, credentials, missing topic, unwritable store) may last before run exits; 0 at once, at most 10m"},
	{Name: "delivery.retry_backoff_max", kind: kindDuration, Default: "60s", Doc: "longest wait between retries of a failing checkpoint (1s doubling up to this); bounds a stuck job to about 3600/this failed txns per hour; 1s to 1h"},

	{Name: "records.format", kind: kindString, Default: RecordsJSON, Doc: "json, csv, debezium, or avro, protobuf, json_schema (Confluent wire format through records.schema_registry)"},
	{Name: "records.metadata_columns", kind: kindMap, Doc: "map of topic, partition, offset or timestamp to a column name"},
	{Name: "records.dead_letter_topic", kind: kindString, Default: "", Doc: "topic for records that cannot be converted; empty fails the checkpoint; must exist and be writable (checked at start)"},
	{Name: "records.dead_letter_delivery", kind: kindString, Default: DeadLetterExactlyOnce, Doc: "exactly_once (dead letters produced in the Kafka transaction of their checkpoint's decision; needs job.coordinator: kafka) or at_least_once (produced as read; a rewind or crash produces them again)"},
	{Name: "records.dead_letter_create", kind: kindBool, Default: false, Doc: "create a missing records.dead_letter_topic at start (kafka.topic's partition count); default refused"},
	{Name: "records.dead_letter_max_bisect_loads", kind: kindInt, Default: 24, Doc: "refused loads (labels, aborted txns) spent bisecting a range Doris refuses to dead-letter its refused rows, about log2(rows per checkpoint) per row; 0 turns bisection off (stop at the first refusal)"},
	{Name: "records.dead_letter_buffer_bytes", kind: kindSize, Default: "16MiB", Doc: "bound of one checkpoint's staged dead letters (exactly_once): reaching it ends the checkpoint"},
	{Name: "records.delete.field", kind: kindString, Default: "", Doc: "json: top-level field whose value records.delete.value makes the record a delete (__DORIS_DELETE_SIGN__ = 1); Unique Key tables only"},
	{Name: "records.delete.value", kind: kindString, Default: "", Doc: "the value of records.delete.field that means delete: a string's text or a number/true/false literal"},
	{Name: "records.delete.tombstones", kind: kindBool, Default: false, Doc: "json: a record with a null value deletes its key, which must be a JSON object of the key columns; Unique Key tables only"},

	{Name: "records.schema_evolution", kind: kindString, Default: EvolutionNone, Doc: "none or add_columns: a Debezium schema change or a new JSON field adds the column (light schema change) before the load that needs it; never drops or narrows"},
	{Name: "records.envelope", kind: kindString, Default: "", Doc: "registry formats: debezium loads Debezium change events (op c/u/r upsert the after image, d deletes the before image); empty: the record is the row"},
	{Name: "records.time_zone", kind: kindString, Default: "UTC", Doc: "registry formats: zone of the DATETIME text of timestamp-millis/micros: UTC, an IANA name, or +08:00"},
	{Name: "records.max_key_bytes", kind: kindSize, Default: "1MiB", Doc: "bound of one record's key; a record past it is a dead letter, or stops run naming it"},
	{Name: "records.max_headers_bytes", kind: kindSize, Default: "1MiB", Doc: "bound of one record's headers (keys plus values); a record past it is a dead letter, or stops run naming it"},
	{Name: "records.max_row_bytes", kind: kindSize, Default: "100MiB", Doc: "registry formats: bound of one row's JSON as decoded (default the BE's streaming_load_json_max_mb, 100 MB); a record past it is a dead letter, or stops run naming it"},
	{Name: "records.json_schema.validate", kind: kindBool, Default: false, Doc: "json_schema: check each record against its registry schema; a record that does not match is a dead letter (Confluent's json.fail.invalid.schema; off by default, as there: it costs about 30 times the pass-through)"},
	{Name: "records.schema_registry.urls", kind: kindList, Default: []string{}, Doc: "Schema Registry base URLs (required by the registry formats)"},
	{Name: "records.schema_registry.username", kind: kindString, Default: "", Doc: "registry HTTP Basic user"},
	{Name: "records.schema_registry.password", kind: kindString, Default: "", Doc: "registry HTTP Basic password (prefer password_file or env)", Secret: true},
	{Name: "records.schema_registry.password_file", kind: kindString, Default: "", Doc: "file holding the registry password"},
	{Name: "records.schema_registry.bearer", kind: kindString, Default: "", Doc: "registry bearer token instead of Basic credentials (prefer bearer_file or env)", Secret: true},
	{Name: "records.schema_registry.bearer_file", kind: kindString, Default: "", Doc: "file holding the registry bearer token"},
	{Name: "records.schema_registry.max_wait", kind: kindDuration, Default: "30s", Doc: "backoff budget per new schema id while the registry is down or does not know it yet; then the record is refused (never dead-lettered); 0 refuses at the first failure, at most 10m"},
	{Name: "records.schema_registry.max_response_bytes", kind: kindSize, Default: "16MiB", Doc: "bound of one registry answer (a schema, a subject list); a longer one is refused with an error naming it, never truncated; 1KiB-1GiB"},
	{Name: "records.schema_registry.tls.ca_file", kind: kindString, Default: "", Doc: "PEM CA bundle for https registry URLs"},
	{Name: "records.schema_registry.tls.cert_file", kind: kindString, Default: "", Doc: "PEM client certificate for the registry (mutual TLS), with tls.key_file"},
	{Name: "records.schema_registry.tls.key_file", kind: kindString, Default: "", Doc: "PEM private key of records.schema_registry.tls.cert_file"},
	{Name: "routing.topic_tables", kind: kindMap, Doc: "map of topic to target table (table or db.table); first routing rule"},
	{Name: "routing.table_field", kind: kindString, Default: "", Doc: "top-level string field naming the target table (of the decoded row for the registry formats; not csv); second rule"},
	{Name: "routing.table_header", kind: kindString, Default: "", Doc: "record header naming the target table; third rule"},
	{Name: "routing.debezium_template", kind: kindString, Default: "", Doc: "target table from Debezium source.db/source.table, e.g. {db}_{table}, sanitised to a Doris name (records.format debezium, or records.envelope debezium); fourth rule"},
	{Name: "routing.default_table", kind: kindString, Default: "", Doc: "table of records no rule routes (e.g. doris.table); empty: they go to records.dead_letter_topic, or stop run"},

	{Name: "tables", kind: kindMap, Doc: "per-table overrides: tables.<table or glob>.properties.<header> (merged over doris.properties), .sequence_col and .delete.field/.value/.tombstones (with routing); an exact name wins over a pattern, a longer pattern over a shorter"},

	{Name: "metrics.listen", kind: kindString, Default: "127.0.0.1:9108", Doc: "Prometheus listen address; empty disables"},
	{Name: "metrics.log_interval", kind: kindDuration, Default: "60s", Doc: "period of run's progress line (state, rows/s, bytes/s, lag, last checkpoint); 0 disables, else at least 1s"},

	{Name: "log.level", kind: kindString, Default: "info", Doc: "debug, info, warn or error"},
	{Name: "log.format", kind: kindString, Default: "text", Doc: "text or json"},
}

// Keys returns the table of configuration keys, for documentation.
func Keys() []Key { return slices.Clone(keys) }

// lookupKey returns the key owning a flattened koanf path: the key itself,
// or the map key it is a sub-key of.
func lookupKey(path string) (Key, bool) {
	for _, k := range keys {
		if k.Name == path {
			return k, true
		}
		if (k.kind == kindMap || k.kind == kindStart) && len(path) > len(k.Name) &&
			path[:len(k.Name)] == k.Name && path[len(k.Name)] == '.' {
			return k, true
		}
	}
	return Key{}, false
}

// defaults returns the default values as a flat koanf map.
func defaults() map[string]any {
	m := map[string]any{}
	for _, k := range keys {
		if k.kind == kindMap {
			continue
		}
		m[k.Name] = k.Default
	}
	return m
}
