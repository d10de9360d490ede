package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// A Kafka connector job written with KC names (apache/doris-kafka-connector
// cfg/DorisSinkConnectorConfig.java) loads as the same doris-sink job.
func TestKafkaConnectAliases(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, `
name: orders_kc
connector.class: org.apache.doris.kafka.connector.DorisSinkConnector
tasks.max: 3
topics: orders
doris.topic2table.map: orders:orders_tbl
doris.urls: fe1,fe2
doris.http.port: 8030
doris.query.port: 9030
doris.user: loader
doris.password: s3cret
doris.database: demo
buffer.flush.time: 30
buffer.size.bytes: 5000000
buffer.count.records: 10000
delivery.guarantee: EXACTLY_ONCE
converter.mode: normal
enable.delete: true
load.model: stream_load
debezium.schema.evolution: none
sink.properties.columns: a,b
errors.deadletterqueue.topic.name: orders-dlq
records.dead_letter_delivery: at_least_once
errors.deadletterqueue.topic.replication.factor: 1
errors.tolerance: all
value.converter: org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable: false
consumer.override.max.poll.records: 500
`, nil, nil, NeedRun)
	checks := []struct{ name, got, want string }{
		{"job.name", c.Job.Name, "orders_kc"},
		{"kafka.topic", c.Kafka.Topic, "orders"},
		{"doris.table", c.Doris.Table, "orders_tbl"},
		{"doris.fe", strings.Join(c.Doris.FE, ","), "http://fe1:8030,http://fe2:8030"},
		{"doris.mysql", c.Doris.MySQL, "fe1:9030"},
		{"doris.user", c.Doris.User, "loader"},
		{"doris.password", c.Doris.Password.Reveal(), "s3cret"},
		{"doris.database", c.Doris.Database, "demo"},
		{"delivery.checkpoint_interval", c.Delivery.CheckpointInterval.String(), "30s"},
		{"delivery.checkpoint_max_bytes", fmt.Sprint(int64(c.Delivery.CheckpointMaxBytes)), "5000000"},
		{"delivery.checkpoint_max_rows", fmt.Sprint(c.Delivery.CheckpointMaxRows), "10000"},
		{"delivery.guarantee", c.Delivery.Guarantee, ExactlyOnce},
		{"records.format", c.Records.Format, RecordsJSON},
		{"doris.properties.hidden_columns", c.Doris.Properties["hidden_columns"], "__DORIS_DELETE_SIGN__"},
		{"doris.properties.columns", c.Doris.Properties["columns"], "a,b"},
		{"records.dead_letter_topic", c.Records.DeadLetterTopic, "orders-dlq"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	all := strings.Join(c.Warnings, "|")
	for _, k := range []string{"connector.class", "tasks.max", "errors.deadletterqueue.topic.replication.factor", "errors.tolerance",
		"value.converter", "value.converter.schemas.enable", "consumer.override.max.poll.records"} {
		if !strings.Contains(all, k+": Kafka ") {
			t.Errorf("no warning for %s in %q", k, c.Warnings)
		}
	}
	if len(c.Warnings) != 7 {
		t.Errorf("%d warnings %q, want 7", len(c.Warnings), c.Warnings)
	}

	// KC's default table is the topic (DorisOptions.getTopicMapTable);
	// debezium_ingestion is records.format debezium; at_least_once spelled
	// the KC way.
	c = mustLoad(t, "name: j\ntopics: [inventory]\ndoris.database: d\nconverter.mode: debezium_ingestion\ndelivery.guarantee: at_least_once\n", nil, nil, NeedRun)
	if c.Kafka.Topic != "inventory" || c.Doris.Table != "inventory" || c.Records.Format != RecordsDebezium || c.Delivery.Guarantee != AtLeastOnce {
		t.Errorf("got topic %q table %q format %q guarantee %q", c.Kafka.Topic, c.Doris.Table, c.Records.Format, c.Delivery.Guarantee)
	}
	// An explicit doris.table wins over the topic default.
	c = mustLoad(t, "name: j\ntopics: inventory\ndoris: {database: d, table: inv}\n", nil, nil, NeedRun)
	if c.Doris.Table != "inv" {
		t.Errorf("doris.table = %q, want inv", c.Doris.Table)
	}
	// So does the Flink table.identifier.
	c = mustLoad(t, "name: j\ntopics: inventory\ntable.identifier: d.inv2\n", nil, nil, NeedRun)
	if c.Doris.Table != "inv2" || c.Doris.Database != "d" {
		t.Errorf("table.identifier: %s.%s, want d.inv2", c.Doris.Database, c.Doris.Table)
	}
}

// The environment takes the KC names in the DORIS_SINK_ spelling
// ("." → "__"); flags take KC value spellings for their canonical keys.
func TestKafkaConnectAliasesEnvAndFlags(t *testing.T) {
	t.Parallel()
	env := []string{
		"DORIS_SINK_NAME=kc_env",
		"DORIS_SINK_TOPICS=orders",
		"DORIS_SINK_DORIS__URLS=fe1, fe2",
		"DORIS_SINK_DORIS__HTTP__PORT=8030",
		"DORIS_SINK_DORIS__QUERY__PORT=9030",
		"DORIS_SINK_DORIS__DATABASE=demo",
		"DORIS_SINK_BUFFER__FLUSH__TIME=15",
		"DORIS_SINK_DELIVERY__GUARANTEE=at_least_once",
		"DORIS_SINK_SINK__PROPERTIES__STRICT_MODE=true",
		"DORIS_SINK_JMX=true",
	}
	c := mustLoad(t, "", env, nil, NeedRun)
	if c.Job.Name != "kc_env" || c.Kafka.Topic != "orders" || c.Doris.Table != "orders" ||
		strings.Join(c.Doris.FE, ",") != "http://fe1:8030,http://fe2:8030" || c.Doris.MySQL != "fe1:9030" ||
		c.Delivery.CheckpointInterval.String() != "15s" || c.Delivery.Guarantee != AtLeastOnce ||
		c.Doris.Properties["strict_mode"] != "true" {
		t.Errorf("env: %+v %+v %+v", c.Job, c.Kafka, c.Doris)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "jmx") {
		t.Errorf("env warnings %q", c.Warnings)
	}
	c = mustLoad(t, minimal, nil, []string{"--guarantee", "AT_LEAST_ONCE"}, NeedRun)
	if c.Delivery.Guarantee != AtLeastOnce {
		t.Errorf("flag --guarantee AT_LEAST_ONCE → %q", c.Delivery.Guarantee)
	}
	// The environment overrides the file's KC keys like any key.
	c = mustLoad(t, "name: j\ntopics: a\ndoris.database: d\n", []string{"DORIS_SINK_TOPICS=b"}, nil, NeedRun)
	if c.Kafka.Topic != "b" {
		t.Errorf("env over file: topic %q", c.Kafka.Topic)
	}
}

// topics (several), topics.regex and doris.topic2table.map with several
// pairs map to kafka.topics, kafka.topic_regex and routing.topic_tables; a
// listed topic without a pair loads into the table named as the topic (KC
// DorisOptions.getTopicMapTable); doris.table defaults to the first
// topic's table.
func TestKafkaConnectTopicsAliases(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, "name: j\ndoris.database: d\ntopics: a, b,c\ndoris.topic2table.map: a:t1,b:t2\n", nil, nil, NeedRun)
	if !slices.Equal(c.Kafka.Topics, []string{"a", "b", "c"}) || c.Kafka.Topic != "" || c.Doris.Table != "t1" ||
		!maps.Equal(c.Routing.TopicTables, map[string]string{"a": "t1", "b": "t2", "c": "c"}) {
		t.Errorf("topics a,b,c with a map: topics %v topic %q table %q routing %v", c.Kafka.Topics, c.Kafka.Topic, c.Doris.Table,
			c.Routing.TopicTables)
	}
	c = mustLoad(t, "name: j\ndoris.database: d\ndoris.topic2table.map: x:tx,y:ty\n", nil, nil, NeedRun)
	if !slices.Equal(c.Kafka.Topics, []string{"x", "y"}) || !maps.Equal(c.Routing.TopicTables, map[string]string{"x": "tx", "y": "ty"}) {
		t.Errorf("map only: topics %v routing %v", c.Kafka.Topics, c.Routing.TopicTables)
	}
	c = mustLoad(t, "name: j\ndoris: {database: d, table: fallback}\ntopics.regex: 'inv\\..*'\ndoris.topic2table.map: inv.a:ta\n", nil, nil, NeedRun)
	if c.Kafka.TopicRegex != `inv\..*` || c.Kafka.Topic != "" || len(c.Kafka.Topics) != 0 || c.Doris.Table != "fallback" ||
		!maps.Equal(c.Routing.TopicTables, map[string]string{"inv.a": "ta"}) {
		t.Errorf("topics.regex: regex %q topics %v table %q routing %v", c.Kafka.TopicRegex, c.Kafka.Topics, c.Doris.Table, c.Routing.TopicTables)
	}
	c = mustLoad(t, "name: j\ndoris.database: d\ntopics: [a, b]\n", []string{"DORIS_SINK_TOPICS=p,q"}, nil, NeedRun)
	if !slices.Equal(c.Kafka.Topics, []string{"p", "q"}) {
		t.Errorf("env topics over file: %v", c.Kafka.Topics)
	}
}

// kafka.topic, kafka.topics and kafka.topic_regex exclude each other; a
// bad regex, a duplicate topic, start offsets with several topics and a
// dead-letter topic among the topics are refused naming the key.
func TestTopicsKeys(t *testing.T) {
	t.Parallel()
	base := "job.name: j\ndoris: {database: d, table: t}\n"
	c := mustLoad(t, base+"kafka.topics: [a, b]\n", nil, nil, NeedRun)
	if !slices.Equal(c.Kafka.SourceTopics(), []string{"a", "b"}) {
		t.Errorf("kafka.topics: %v", c.Kafka.SourceTopics())
	}
	c = mustLoad(t, base+"kafka.topic_regex: 'a.*'\n", nil, nil, NeedRun)
	if c.Kafka.TopicRegex != "a.*" {
		t.Errorf("kafka.topic_regex: %q", c.Kafka.TopicRegex)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"kafka: {topic: a, topics: [b]}\n", "kafka.topics"},
		{"kafka: {topics: [a], topic_regex: b}\n", "kafka.topics"},
		{"kafka: {topics: [a, a]}\n", "kafka.topics"},
		{"kafka: {topics: [a, 'b c']}\n", "kafka.topics"},
		{"kafka: {topic_regex: 'a('}\n", "kafka.topic_regex"},
		{"kafka: {topics: [a, b], start: {0: 5}}\n", "kafka.start"},
		{"kafka: {topics: [a, b]}\nrecords: {dead_letter_topic: b}\n", "records.dead_letter_topic"},
	} {
		_, err := load(t, base+tc.yaml, nil, nil, NeedRun)
		keyError(t, err, tc.key)
	}
}

// Multi-topic and multi-table options are refused naming the option, and
// an alias disagreeing with its canonical key is a conflict naming both.
func TestKafkaConnectAliasRefusals(t *testing.T) {
	t.Parallel()
	base := "name: j\ndoris.database: d\n"
	for _, tc := range []struct{ yaml, key, want string }{
		{"topics: a,b\ntopics.regex: 'orders-.*'\n", "topics.regex", "not both"},
		{"topics: a\ndoris.topic2table.map: a:t1,b:t2\n", "doris.topic2table.map", "a topic of topics"},
		{"topics: a,b\ndoris.topic2table.map: a:t1,a:t2\n", "doris.topic2table.map", "each topic once"},
		{"topics: a,b\nrecord.tablename.field: tbl\n", "record.tablename.field", "one topic only"},
		{"topics: a\ndoris.topic2table.map: a\n", "doris.topic2table.map", "topic:table"},
		{"topics: a\ndoris.table.field: tbl\n", "doris.table.field", "record.tablename.field"},
		{"topics: a\ndoris.urls: fe1\n", "doris.urls", "doris.http.port"},
		{"topics: a\ndoris.urls: 'fe1:8030'\ndoris.http.port: 8030\n", "doris.urls", "without scheme or port"},
		{"topics: a\ndoris.http.port: 8030\n", "doris.http.port", "only with doris.urls"},
		{"topics: a\ndoris.urls: fe1\ndoris.http.port: 80800\n", "doris.http.port", "1-65535"},
		{"topics: a\nbuffer.flush.time: 10s\n", "buffer.flush.time", "whole seconds"},
		{"topics: a\nconverter.mode: avro\n", "converter.mode", "normal or debezium_ingestion"},
		{"topics: a\nload.model: copy_into\n", "load.model", "copy_into is not supported"},
		{"topics: a\ndebezium.schema.evolution: full\n", "debezium.schema.evolution", "none or basic"},
		{"topics: a\ntransforms: unwrap\ntransforms.unwrap.type: io.debezium.transforms.ExtractNewRecordState\n", "transforms", "records.format: debezium"},
		{"topics: a\ntransforms: unwrap\ntransforms.unwrap.type: io.debezium.transforms.ExtractNewRecordState\n", "transforms.unwrap.type", "see the transforms error"},
	} {
		_, err := load(t, base+tc.yaml, nil, nil, NeedRun)
		ke := keyError(t, err, tc.key)
		if ke != nil && !strings.Contains(ke.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, ke, tc.want)
		}
	}
	var ce *ConflictError
	for _, tc := range []struct{ yaml, a, b string }{
		{"topics: a\nkafka: {topic: b}\n", "kafka.topic=b", "topics=a"},
		{"topics: a\ndoris.topic2table.map: b:t\n", "topics=a", "doris.topic2table.map=b"},
		{"topics: a\ndoris: {table: x}\ndoris.topic2table.map: a:t\n", "doris.table=x", "doris.topic2table.map=t"},
		{"topics: a\nbuffer.flush.time: 30\ndelivery: {checkpoint_interval: 10s}\n", "delivery.checkpoint_interval=10s", "buffer.flush.time=30s"},
		{"topics: a\nconverter.mode: normal\nenable.delete: false\nrecords: {format: debezium}\n", "records.format=debezium", "converter.mode=json"},
		{"topics: a\nconverter.mode: debezium_ingestion\nenable.delete: false\n", "enable.delete=false", "converter.mode=debezium_ingestion"},
	} {
		_, err := load(t, base+tc.yaml, nil, nil, NeedRun)
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.a) || !strings.Contains(err.Error(), tc.b) {
			t.Errorf("%q: err = %v, want a *ConflictError naming %s and %s", tc.yaml, err, tc.a, tc.b)
		}
	}
	// The same value from the alias and the canonical key is fine.
	mustLoad(t, base+"topics: a\nkafka: {topic: a}\ndoris.topic2table.map: a:t\n", nil, nil, NeedRun)
	// The password is redacted in a conflict (doris.password is a KC name
	// and a doris-sink key: a Flink password alias conflicts with it).
	_, err := load(t, base+"topics: a\ndoris.password: pw-alpha\npassword: pw-beta\n", nil, nil, NeedRun)
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "pw-alpha") || strings.Contains(err.Error(), "pw-beta") {
		t.Errorf("password conflict: %v, want a redacted *ConflictError", err)
	}
}

// An error names the alias that set the key, and not once the environment
// set the key directly.
func TestAliasOriginFollowsTheSource(t *testing.T) {
	t.Parallel()
	_, err := load(t, "name: j\ntopics: a\ndoris.database: d\nbuffer.size.bytes: lots\n", nil, nil, NeedRun)
	keyError(t, err, "delivery.checkpoint_max_bytes (set by buffer.size.bytes)")
	_, err = load(t, "name: j\ntopics: a\ndoris.database: d\nbuffer.size.bytes: 100\n",
		[]string{"DORIS_SINK_DELIVERY__CHECKPOINT_MAX_BYTES=lots"}, nil, NeedRun)
	keyError(t, err, "delivery.checkpoint_max_bytes")
}

// record.tablename.field routes by the record's field, falling back to the
// topic's table as the Kafka connector does.
func TestKafkaConnectTableNameField(t *testing.T) {
	t.Parallel()
	base := "name: j\ndoris.database: d\n"
	for _, tc := range []struct{ yaml, fallback string }{
		{"topics: a\nrecord.tablename.field: tbl\n", "a"},
		{"topics: a\ndoris.topic2table.map: a:t1\nrecord.tablename.field: tbl\n", "t1"},
		{"topics: a\ndoris.table: t9\nrecord.tablename.field: tbl\n", "t9"},
	} {
		c := mustLoad(t, base+tc.yaml, nil, nil, NeedRun)
		if c.Routing.TableField != "tbl" || c.Routing.DefaultTable != tc.fallback {
			t.Errorf("%q: routing %+v, want table_field tbl, default_table %s", tc.yaml, c.Routing, tc.fallback)
		}
	}
}
