package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The Doris Kafka connector's option names (apache/doris-kafka-connector
// cfg/DorisSinkConnectorConfig.java and cfg/DorisOptions.java), accepted
// from the YAML file and the environment like the Flink aliases
// (docs/configuration.md "Kafka Connect connector aliases"). Several of them
// already are doris-sink keys with the same meaning (doris.user,
// doris.password, doris.database, delivery.guarantee); those need no
// translation, only delivery.guarantee's value spelling (exactly_once).
//
// The translation works on one source at a time (the file, or the
// environment): options that combine (doris.urls with its ports, topics with
// doris.topic2table.map) must come from the same source.

// kcAlias is one Kafka connector option and how it maps.
type kcAlias struct {
	name   string
	target string // canonical key(s), for documentation
	doc    string
}

// kcAliases lists the translated options, for documentation; kcTranslate
// implements them.
var kcAliases = []kcAlias{
	{"name", "job.name", "the connector name is the KC label prefix; validated as a doris-sink job name"},
	{"doris.urls", "doris.fe, doris.mysql", "comma list of FE hosts, with doris.http.port (required) → http://host:port; with doris.query.port the first host → doris.mysql"},
	{"doris.http.port", "doris.fe", "only with doris.urls"},
	{"doris.query.port", "doris.mysql", "only with doris.urls"},
	{"topics", "kafka.topic (one), kafka.topics (several)", "comma list (or YAML list); a topic without a doris.topic2table.map entry loads into the table named as the topic, as in KC (routing.topic_tables with several topics); doris.table defaults to the first topic's table"},
	{"topics.regex", "kafka.topic_regex", "anchored Go regexp (KC: Java regexp, matched against the whole name too), not with topics; tables from doris.topic2table.map (routing.topic_tables), else doris.table (KC would use the topic name: set a routing rule)"},
	{"doris.topic2table.map", "routing.topic_tables (one pair: kafka.topic, doris.table)", "t1:tbl1,t2:tbl2; one pair keeps the one-table job of kafka.topic and doris.table; without topics or topics.regex its topics are the job's topics"},
	{"buffer.flush.time", "delivery.checkpoint_interval", "seconds"},
	{"buffer.size.bytes", "delivery.checkpoint_max_bytes", "bytes; per checkpoint here, per partition in KC"},
	{"buffer.count.records", "delivery.checkpoint_max_rows", "rows; per checkpoint here, per partition in KC"},
	{"delivery.guarantee", "delivery.guarantee", "exactly_once / at_least_once (any case) are accepted spellings of exactly-once / at-least-once, from every source"},
	{"converter.mode", "records.format", "normal → json, debezium_ingestion → debezium"},
	{"enable.delete", "doris.properties.hidden_columns", "true with converter.mode normal: rows carrying __DORIS_DELETE_SIGN__ delete (hidden_columns); false with debezium_ingestion is refused (records.format debezium always applies deletes)"},
	{"load.model", "—", "stream_load accepted; copy_into refused"},
	{"debezium.schema.evolution", "records.schema_evolution", "none → none, basic → add_columns (adds columns, never drops or narrows)"},
	{"record.tablename.field", "routing.table_field, routing.default_table", "the record field naming its table; records without it go to the topic's table (doris.topic2table.map, topics or doris.table), as in KC"},
	{"doris.table.field", "—", "refused: use record.tablename.field (routing.table_field)"},
	{"errors.deadletterqueue.topic.name", "records.dead_letter_topic", "Connect's dead-letter queue"},
	{"value.converter", "records.format", "io.confluent.connect.avro.AvroConverter → avro, io.confluent.connect.protobuf.ProtobufConverter → protobuf, io.confluent.connect.json.JsonSchemaConverter → json_schema (with converter.mode debezium_ingestion: records.envelope debezium); any other converter is ignored with a warning (records are read as bytes; records.format says how values are parsed)"},
	{"value.converter.schema.registry.url", "records.schema_registry.urls", "comma list of registry URLs"},
	{"value.converter.basic.auth.user.info", "records.schema_registry.username, records.schema_registry.password", "user:password (Connect's basic.auth.credentials.source USER_INFO)"},
	{"value.converter.bearer.auth.token", "records.schema_registry.bearer", "the registry bearer token"},
	{"value.converter.json.fail.invalid.schema", "records.json_schema.validate", "JsonSchemaConverter: true checks each record against its schema"},
}

// ignoredKC are Kafka connector and Connect framework options with no
// doris-sink equivalent; they are accepted with a warning saying why.
var ignoredKC = map[string]string{
	"connector.class":                "doris-sink is the connector",
	"tasks.max":                      "tasks are not slots: set job.slots for group mode (several processes sharing the partitions)",
	"key.converter":                  "records are read as bytes; records.format says how values are parsed",
	"key.converter.schemas.enable":   "records.format debezium reads both the plain and the schema/payload envelope",
	"value.converter.schemas.enable": "records.format debezium reads both the plain and the schema/payload envelope",
	"label.prefix":                   "deprecated in the Kafka connector; job.name (KC name) is the label prefix",
	"enable.2pc":                     "delivery.guarantee decides: exactly-once loads with two-phase commit, at-least-once without",
	"enable.combine.flush":           "doris-sink already loads all partitions in one Stream Load per checkpoint",
	"auto.redirect":                  "doris-sink loads through the FE (which redirects to a BE), or to doris.be when set",
	"request.read.timeout.ms":        "doris-sink's HTTP timeouts are built in",
	"request.connect.timeout.ms":     "doris-sink's HTTP timeouts are built in",
	"max.retries":                    "doris-sink retries commits until they resolve (delivery.retry_backoff_max, delivery.fail_fast_after)",
	"retry.interval.ms":              "doris-sink backs off by itself (delivery.retry_backoff_max)",
	"jmx":                            "doris-sink exposes Prometheus metrics (metrics.listen)",
	"database.time_zone":             "values are loaded as they are in the record; Doris applies its own time zone",
	"behavior.on.null.values":        "null values (tombstones) are skipped with records.format debezium, deletes with records.delete.tombstones, and otherwise fail the checkpoint or go to records.dead_letter_topic",
	"errors.tolerance":               "records that cannot be converted go to records.dead_letter_topic when set, else fail the checkpoint",
}

// ignoredKCPrefixes are Kafka Connect option families (every key under the
// prefix) with no doris-sink equivalent; each key is warned like ignoredKC.
var ignoredKCPrefixes = []struct{ prefix, why string }{
	{"key.converter.", "converter settings: records are read as bytes"},
	{"value.converter.", "converter settings: records are read as bytes"},
	{"header.converter", "headers are not loaded"},
	{"consumer.override.", "doris-sink's consumer settings are its own (kafka.*)"},
	{"errors.log.", "a bad record's error names its topic, partition and offset"},
	{"errors.retry.", "doris-sink retries by itself (delivery.retry_backoff_max)"},
	{"errors.deadletterqueue.", "the dead-letter topic must exist; its records carry the error in headers"},
}

// refusedKCPrefixes are option families that would change what is loaded
// if ignored.
var refusedKCPrefixes = []struct{ prefix, why string }{
	{"transforms", "Kafka Connect transforms (SMTs) are not supported: the records would be loaded untransformed"},
	{"predicates", "Kafka Connect predicates (of transforms) are not supported"},
}

// KafkaConnectAliases returns the Kafka connector option → doris-sink key
// table for documentation: each row is {option, doris-sink key(s), note}.
func KafkaConnectAliases() [][3]string {
	rows := make([][3]string, 0, len(kcAliases)+len(ignoredKC)+1)
	for _, a := range kcAliases {
		rows = append(rows, [3]string{a.name, a.target, a.doc})
	}
	rows = append(rows, [3]string{"sink.properties.*", "doris.properties.*", "as for the Flink connector (sink.properties.format → doris.format)"})
	for _, p := range refusedKCPrefixes {
		rows = append(rows, [3]string{p.prefix + ".*", "—", "refused: " + p.why})
	}
	ign := make([]string, 0, len(ignoredKC))
	for k := range ignoredKC {
		ign = append(ign, k)
	}
	sort.Strings(ign)
	for _, k := range ign {
		rows = append(rows, [3]string{k, "(ignored, warning)", ignoredKC[k]})
	}
	for _, p := range ignoredKCPrefixes {
		rows = append(rows, [3]string{strings.TrimSuffix(p.prefix, ".") + ".*", "(ignored, warning)", p.why})
	}
	return rows
}

// canonicalGuarantee accepts the Kafka connector's spelling of
// delivery.guarantee (exactly_once, AT_LEAST_ONCE: KC's DeliveryGuarantee
// enum) for the doris-sink values; anything else is returned as is.
func canonicalGuarantee(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "exactly_once":
		return ExactlyOnce
	case "at_least_once":
		return AtLeastOnce
	}
	return s
}

// kcSet is one canonical key set by a Kafka connector option.
type kcSet struct {
	key, alias string
	val        any
}

// kcTranslate removes the Kafka connector options from flat (one source's
// flat key map) and returns the canonical keys they set, the warnings for
// ignored options and the refusals (*KeyError naming the option).
func kcTranslate(flat map[string]any) (sets []kcSet, warnings []string, err error) {
	var errs errList
	refuse := func(k string, allowed string) {
		errs.add(&KeyError{Key: k, Value: fmt.Sprint(flat[k]), Allowed: allowed})
	}
	take := func(k string) (string, bool) {
		v, ok := flat[k]
		if !ok {
			return "", false
		}
		delete(flat, k)
		if l, ok := v.([]any); ok { // a YAML list: the KC form is a comma list
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i] = fmt.Sprint(e)
			}
			return strings.Join(parts, ","), true
		}
		return strings.TrimSpace(fmt.Sprint(v)), true
	}
	regSets, regFormat, regWarn := kcRegistry(take)
	sets = append(sets, regSets...)
	warnings = append(warnings, regWarn...)
	names := make([]string, 0, len(flat))
	transforms := map[string]any{} // the transforms options, as given (refusals read the chain)
	for k, v := range flat {
		names = append(names, k)
		if k == "transforms" || strings.HasPrefix(k, "transforms.") {
			transforms[k] = v
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if why, ok := ignoredKC[k]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: Kafka connector option ignored: %s", k, why))
			delete(flat, k)
			continue
		}
		if k == "errors.deadletterqueue.topic.name" {
			continue // mapped below
		}
		for _, p := range ignoredKCPrefixes {
			if strings.HasPrefix(k, p.prefix) {
				warnings = append(warnings, fmt.Sprintf("%s: Kafka Connect option ignored: %s", k, p.why))
				delete(flat, k)
				break
			}
		}
		for _, p := range refusedKCPrefixes {
			if k == p.prefix || strings.HasPrefix(k, p.prefix+".") {
				if why := debeziumUnwrap(transforms, k); why != "" {
					refuse(k, why)
					delete(flat, k)
					break
				}
				refuse(k, "not supported: "+p.why)
				delete(flat, k)
				break
			}
		}
	}
	if v, ok := flat["delivery.guarantee"].(string); ok {
		flat["delivery.guarantee"] = canonicalGuarantee(v)
	}
	if v, ok := take("name"); ok {
		sets = append(sets, kcSet{"job.name", "name", v})
	}

	// doris.urls + ports (KC DorisOptions.getHttpUrls/getQueryUrls append
	// ":port" to each host).
	urls, hasURLs := take("doris.urls")
	httpPort, hasHTTP := take("doris.http.port")
	queryPort, hasQuery := take("doris.query.port")
	switch {
	case hasURLs:
		hosts := splitList(urls)
		bad := len(hosts) == 0
		for _, h := range hosts {
			if strings.Contains(h, "://") || strings.Contains(h, ":") || strings.Contains(h, "/") {
				bad = true
			}
		}
		if bad {
			errs.add(&KeyError{Key: "doris.urls", Value: urls, Allowed: "a comma list of FE hosts without scheme or port (the ports are doris.http.port and doris.query.port)"})
			break
		}
		if !hasHTTP {
			errs.add(&KeyError{Key: "doris.urls", Value: urls, Allowed: "needs doris.http.port in the same source (file or environment), as in the Kafka connector"})
			break
		}
		hp, perr := port(httpPort)
		if perr != nil {
			errs.add(&KeyError{Key: "doris.http.port", Value: httpPort, Allowed: perr.Error()})
			break
		}
		fe := make([]string, len(hosts))
		for i, h := range hosts {
			fe[i] = "http://" + h + ":" + strconv.Itoa(hp)
		}
		sets = append(sets, kcSet{"doris.fe", "doris.urls", fe})
		if hasQuery {
			qp, perr := port(queryPort)
			if perr != nil {
				errs.add(&KeyError{Key: "doris.query.port", Value: queryPort, Allowed: perr.Error()})
				break
			}
			sets = append(sets, kcSet{"doris.mysql", "doris.urls", hosts[0] + ":" + strconv.Itoa(qp)})
		}
	case hasHTTP:
		errs.add(&KeyError{Key: "doris.http.port", Value: httpPort, Allowed: "only with doris.urls in the same source (file or environment)"})
	case hasQuery:
		errs.add(&KeyError{Key: "doris.query.port", Value: queryPort, Allowed: "only with doris.urls in the same source (file or environment)"})
	}

	// topics, topics.regex, doris.topic2table.map.
	topic, mapped, mappedTable := kcTopics(take, flat, &sets, &errs)
	// record.tablename.field: the record's field names its table; KC
	// falls back to the topic's table when the field is missing
	// (DorisDefaultSinkService.parseRecordTableName), so that table is
	// routing.default_table when this source names it.
	if v, ok := take("record.tablename.field"); ok && v != "" {
		sets = append(sets, kcSet{"routing.table_field", "record.tablename.field", v})
		fallback := ""
		switch {
		case mapped:
			fallback = mappedTable
		case topic != "":
			fallback = topic
		}
		if t, ok := flat["doris.table"].(string); ok && t != "" {
			fallback = t
		}
		if fallback = strings.TrimSpace(fallback); fallback != "" {
			sets = append(sets, kcSet{"routing.default_table", "record.tablename.field", fallback})
		}
	}
	if _, ok := flat["doris.table.field"]; ok {
		refuse("doris.table.field", "not supported: name the record field with record.tablename.field (routing.table_field)")
		delete(flat, "doris.table.field")
	}

	// Buffers → checkpoint triggers.
	if v, ok := take("buffer.flush.time"); ok {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 1 {
			errs.add(&KeyError{Key: "buffer.flush.time", Value: v, Allowed: "whole seconds, at least 1"})
		} else {
			sets = append(sets, kcSet{"delivery.checkpoint_interval", "buffer.flush.time", (fmt.Sprintf("%ds", n))})
		}
	}
	if v, ok := take("buffer.size.bytes"); ok {
		sets = append(sets, kcSet{"delivery.checkpoint_max_bytes", "buffer.size.bytes", v})
	}
	if v, ok := take("buffer.count.records"); ok {
		sets = append(sets, kcSet{"delivery.checkpoint_max_rows", "buffer.count.records", v})
	}

	// converter.mode and enable.delete.
	format := ""
	if v, ok := take("converter.mode"); ok {
		switch strings.ToLower(v) {
		case "normal":
			format = RecordsJSON
		case "debezium_ingestion":
			format = RecordsDebezium
		default:
			errs.add(&KeyError{Key: "converter.mode", Value: v, Allowed: "normal or debezium_ingestion"})
		}
		switch {
		case regFormat != "" && format == RecordsDebezium:
			// Debezium through the Avro/Protobuf/JSON Schema converter.
			sets = append(sets, kcSet{"records.envelope", "converter.mode", EnvelopeDebezium})
		case regFormat != "":
			// normal: the value.converter's registry format stands.
		case format != "":
			sets = append(sets, kcSet{"records.format", "converter.mode", format})
		}
	}
	if v, ok := take("enable.delete"); ok {
		b, perr := strconv.ParseBool(v)
		switch {
		case perr != nil:
			errs.add(&KeyError{Key: "enable.delete", Value: v, Allowed: "true or false"})
		case !b && format == RecordsDebezium:
			errs.add(&ConflictError{Keys: []string{"enable.delete=false", "converter.mode=debezium_ingestion"},
				Reason: "records.format debezium always applies op=d as a delete; ignoring deletes is not supported",
				Fix:    "drop enable.delete (deletes are applied) or use converter.mode normal"})
		case b && format != RecordsDebezium:
			// KC normal mode: the hidden_columns header only; the rows carry
			// __DORIS_DELETE_SIGN__ themselves (KC HttpPutBuilder.addHiddenColumns).
			sets = append(sets, kcSet{"doris.properties.hidden_columns", "enable.delete", DeleteSignColumn})
		}
	}

	if v, ok := take("load.model"); ok && !strings.EqualFold(v, "stream_load") {
		errs.add(&KeyError{Key: "load.model", Value: v, Allowed: "stream_load (copy_into is not supported)"})
	}
	if v, ok := take("debezium.schema.evolution"); ok {
		switch strings.ToLower(v) {
		case "none":
			sets = append(sets, kcSet{"records.schema_evolution", "debezium.schema.evolution", EvolutionNone})
		case "basic":
			sets = append(sets, kcSet{"records.schema_evolution", "debezium.schema.evolution", EvolutionAddColumns})
		default:
			errs.add(&KeyError{Key: "debezium.schema.evolution", Value: v, Allowed: "none or basic (records.schema_evolution add_columns)"})
		}
	}
	if v, ok := take("errors.deadletterqueue.topic.name"); ok && v != "" {
		sets = append(sets, kcSet{"records.dead_letter_topic", "errors.deadletterqueue.topic.name", v})
	}
	return sets, warnings, errs.err()
}

// DeleteSignColumn is Doris's hidden delete-sign column (docs/doris-facts.md §7).
const DeleteSignColumn = "__DORIS_DELETE_SIGN__"

func port(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("want a port number 1-65535")
	}
	return n, nil
}

// kcTopics translates topics, topics.regex and doris.topic2table.map
// (KC DorisOptions: topics and topics.regex exclude each other; a topic
// without a map entry loads into the table named as the topic,
// getTopicMapTable). It returns the only topic of a one-topic job (""
// otherwise) and whether and to which table its map pair maps.
func kcTopics(take func(string) (string, bool), flat map[string]any, sets *[]kcSet, errs *errList) (topic string, mapped bool, mappedTable string) {
	var topics []string
	v, hasTopics := take("topics")
	if hasTopics {
		topics = splitList(v)
		if len(topics) == 0 {
			errs.add(&KeyError{Key: "topics", Value: v, Allowed: "a comma list of topics"})
		}
	}
	re, hasRegex := take("topics.regex")
	switch {
	case hasRegex && hasTopics:
		errs.add(&KeyError{Key: "topics.regex", Value: re, Allowed: "topics or topics.regex, not both (as in Kafka Connect)"})
	case hasRegex:
		*sets = append(*sets, kcSet{"kafka.topic_regex", "topics.regex", re})
	}
	pairs := map[string]string{}
	var order []string
	if m, ok := take("doris.topic2table.map"); ok && m != "" {
		for _, pair := range splitList(m) {
			t, tbl, okPair := strings.Cut(pair, ":")
			t, tbl = strings.TrimSpace(t), strings.TrimSpace(tbl)
			if !okPair || t == "" || tbl == "" || strings.Contains(tbl, ":") {
				errs.add(&KeyError{Key: "doris.topic2table.map", Value: m, Allowed: "topic:table pairs, comma separated"})
				return "", false, ""
			}
			if _, dup := pairs[t]; dup {
				errs.add(&KeyError{Key: "doris.topic2table.map", Value: m, Allowed: "each topic once (" + t + " is mapped twice)"})
				return "", false, ""
			}
			pairs[t] = tbl
			order = append(order, t)
		}
	}
	if len(topics) == 0 && !hasRegex {
		topics = order // the map names the job's topics
	}
	_, tableSet := flat["doris.table"]
	_, flink := flat["table.identifier"]
	switch {
	case len(topics) == 1 && !hasRegex && len(pairs) <= 1:
		// One topic, one table: kafka.topic and doris.table, as before
		// kafka.topics (a map pair for another topic conflicts on
		// kafka.topic, naming both keys).
		topic = topics[0]
		src := "topics"
		if !hasTopics {
			src = "doris.topic2table.map"
		}
		*sets = append(*sets, kcSet{"kafka.topic", src, topic})
		for t, tbl := range pairs {
			mapped, mappedTable = true, tbl
			*sets = append(*sets, kcSet{"kafka.topic", "doris.topic2table.map", t}, kcSet{"doris.table", "doris.topic2table.map", tbl})
		}
		if !mapped && !tableSet && !flink {
			// KC DorisOptions.getTopicMapTable: no map entry → the table is
			// the topic.
			*sets = append(*sets, kcSet{"doris.table", "topics", topic})
		}
		return topic, mapped, mappedTable
	case len(topics) > 1 || hasRegex:
		if _, ok := flat["record.tablename.field"]; ok {
			// KC takes the record's field before the topic's table; here
			// routing.topic_tables is the first rule and would win.
			errs.add(&KeyError{Key: "record.tablename.field", Value: fmt.Sprint(flat["record.tablename.field"]),
				Allowed: "one topic only: with several topics (or topics.regex) set routing.table_field and routing.topic_tables yourself (routing.topic_tables is the first rule)"})
			return "", false, ""
		}
	}
	src := "topics"
	if !hasTopics {
		src = "doris.topic2table.map"
	}
	switch {
	case len(topics) > 1:
		*sets = append(*sets, kcSet{"kafka.topics", src, topics})
	case len(topics) == 1:
		*sets = append(*sets, kcSet{"kafka.topic", src, topics[0]})
	}
	for _, t := range topics {
		tbl, ok := pairs[t]
		src := "doris.topic2table.map"
		if !ok {
			tbl, src = t, "topics" // KC: the table is the topic
		}
		*sets = append(*sets, kcSet{"routing.topic_tables." + t, src, tbl})
	}
	for _, t := range order {
		if !slices.Contains(topics, t) {
			if !hasRegex {
				errs.add(&KeyError{Key: "doris.topic2table.map", Value: t + ":" + pairs[t], Allowed: "a topic of topics"})
				continue
			}
			*sets = append(*sets, kcSet{"routing.topic_tables." + t, "doris.topic2table.map", pairs[t]})
		}
	}
	if len(topics) > 0 && !tableSet && !flink {
		tbl, ok := pairs[topics[0]]
		if !ok {
			tbl = topics[0]
		}
		*sets = append(*sets, kcSet{"doris.table", "topics", tbl})
	}
	return "", false, ""
}

// debeziumSMTs are the Debezium transforms that unwrap the change event
// envelope (io.debezium.transforms.ExtractNewRecordState; UnwrapFromEnvelope
// is its name before Debezium 0.10).
var debeziumSMTs = []string{"io.debezium.transforms.ExtractNewRecordState", "io.debezium.transforms.UnwrapFromEnvelope"}

// debeziumUnwrap returns the refusal of transforms option k (transforms:
// the config's transforms options) when the config's transforms unwrap Debezium envelopes (transforms=unwrap with
// transforms.unwrap.type ExtractNewRecordState): doris-sink reads the
// envelope itself (records.format: debezium), so the fix is named; ""
// for any other transform.
func debeziumUnwrap(flat map[string]any, k string) string {
	chain, _ := flat["transforms"].(string)
	for _, name := range splitList(chain) {
		typ, _ := flat["transforms."+name+".type"].(string)
		if !slices.Contains(debeziumSMTs, strings.TrimSpace(typ)) {
			continue
		}
		if k != "transforms" && !strings.HasPrefix(k, "transforms."+name+".") {
			continue // another transform of the chain: refused on its own
		}
		if k != "transforms" {
			return "not supported: an option of the Debezium transform " + name + " (see the transforms error: remove it)"
		}
		return "not supported: Kafka Connect transforms (SMTs) do not run in doris-sink; this one (" + name + ", " +
			strings.TrimSpace(typ) + ") unwraps Debezium change events, which doris-sink reads itself: remove the " +
			"transforms options and set converter.mode: debezium_ingestion (records.format: debezium). Inserts and " +
			"updates load the after state, as the transform gives it; a delete deletes the row (needs a Unique Key " +
			"table; the transform's default drops deletes)"
	}
	return ""
}
