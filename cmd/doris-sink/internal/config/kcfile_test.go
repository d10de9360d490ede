package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func kcTestdata(name string) string {
	return filepath.Join("testdata", "doris-kafka-connector", name)
}

// Issue 30: the doris-kafka-connector's example configs are read as they
// are: a .properties file and the Connect REST JSON body, through the
// Kafka Connect aliases (the same keys a YAML file of those names gives).
func TestKafkaConnectFilesAsTheyAre(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, job, db, table, topic, format string
	}{
		{"doris-connector-sink.properties", "test-doris-sink", "test_db", "test_kafka_tbl", "topic_test", RecordsJSON},
		{"string_msg_connector.json", "string_msg_connector", "string_msg", "string_msg_tab", "string_test", RecordsJSON},
		{"debezium_dml_event.json", "debezium_dml_event", "debezium_ingestion_msg", "debezium_dml_event_tab", "debezium_dml_event", RecordsDebezium},
	} {
		c, err := Load(LoadOptions{File: kcTestdata(tc.file), Need: NeedRun})
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if c.Job.Name != tc.job || c.Doris.Database != tc.db || c.Doris.Table != tc.table || c.Kafka.Topic != tc.topic ||
			c.Records.Format != tc.format || len(c.Doris.FE) != 1 || c.Doris.FE[0] != "http://"+map[bool]string{true: "10.10.10.1", false: "127.0.0.1"}[strings.HasSuffix(tc.file, ".properties")]+":8030" {
			t.Errorf("%s read as job %q db %q table %q topic %q format %q fe %v", tc.file, c.Job.Name, c.Doris.Database,
				c.Doris.Table, c.Kafka.Topic, c.Records.Format, c.Doris.FE)
		}
	}
}

// A bare config map (PUT /connectors/<name>/config) is read too; a REST
// body with other members, or two different names, is refused.
func TestConnectJSONForms(t *testing.T) {
	t.Parallel()
	bare := `{"name": "orders-kc", "topics": "orders", "doris.topic2table.map": "orders:orders",
"doris.urls": "fe1", "doris.http.port": "8030", "doris.database": "demo", "delivery.guarantee": "exactly_once"}`
	c, err := Load(LoadOptions{File: writeFile(t, "c.json", bare), Need: NeedRun})
	if err != nil || c.Job.Name != "orders-kc" || c.Doris.FE[0] != "http://fe1:8030" || c.Delivery.Guarantee != ExactlyOnce {
		t.Fatalf("bare config map: %+v %v", c, err)
	}
	for _, bad := range []string{
		`{"name": "a", "config": {"topics": "t"}, "tasks": []}`,
		`{"name": "a", "config": {"name": "b", "topics": "t"}}`,
		`{"name": "a", "config": `,
	} {
		if _, err := Load(LoadOptions{File: writeFile(t, "c.json", bad)}); err == nil {
			t.Errorf("JSON %s accepted", bad)
		}
	}
	// Java properties syntax: continuation lines, ':' separators, ${...}
	// left as written (Connect config providers are not expanded).
	props := "name=p1\ntopics : orders\ndoris.topic2table.map=orders:\\\n  orders\ndoris.urls=fe1\ndoris.http.port=8030\n" +
		"doris.database=demo\ndoris.password=${file:/run/secrets/doris:password}\n"
	c, err = Load(LoadOptions{File: writeFile(t, "c.properties", props), Need: NeedRun, ReadFile: nil})
	if err != nil || c.Job.Name != "p1" || c.Kafka.Topic != "orders" || c.Doris.Table != "orders" ||
		c.Doris.Password != "${file:/run/secrets/doris:password}" {
		t.Fatalf("properties: %+v %v", c, err)
	}
}

// Issue 30: transforms=unwrap with Debezium's ExtractNewRecordState is
// refused naming records.format: debezium (converter.mode:
// debezium_ingestion), which reads the envelope itself; the transform's
// own options point to that error.
func TestDebeziumUnwrapNamesRecordsFormat(t *testing.T) {
	t.Parallel()
	props := "name=inv\ntopics=dbserver1.inventory.customers\ndoris.urls=fe1\ndoris.http.port=8030\ndoris.database=inv\n" +
		"transforms=unwrap\ntransforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState\ntransforms.unwrap.drop.tombstones=false\n"
	_, err := Load(LoadOptions{File: writeFile(t, "c.properties", props), Need: NeedRun})
	ke := keyError(t, err, "transforms")
	if !strings.Contains(ke.Allowed, "records.format: debezium") || !strings.Contains(ke.Allowed, "converter.mode: debezium_ingestion") {
		t.Fatalf("transforms refusal %q does not name records.format: debezium", ke.Allowed)
	}
	if ke := keyError(t, err, "transforms.unwrap.type"); !strings.Contains(ke.Allowed, "see the transforms error") {
		t.Fatalf("transforms.unwrap.type refusal %q", ke.Allowed)
	}
	// Any other transform keeps the general refusal.
	other := strings.Replace(props, "io.debezium.transforms.ExtractNewRecordState", "org.apache.kafka.connect.transforms.ReplaceField$Value", 1)
	_, err = Load(LoadOptions{File: writeFile(t, "c.properties", other), Need: NeedRun})
	if ke := keyError(t, err, "transforms"); strings.Contains(ke.Allowed, "debezium") {
		t.Fatalf("a non-Debezium transform refused as %q", ke.Allowed)
	}
}

// Issue 30: with no file a config comes from DORIS_SINK_* alone (a
// container configured by its environment), the Kafka Connect names
// included.
func TestEnvironmentOnlyConfig(t *testing.T) {
	t.Parallel()
	env := []string{"DORIS_SINK_JOB__NAME=orders", "DORIS_SINK_KAFKA__BROKERS=k1:9092,k2:9092", "DORIS_SINK_KAFKA__TOPIC=orders",
		"DORIS_SINK_DORIS__FE=https://fe:8030", "DORIS_SINK_DORIS__DATABASE=demo", "DORIS_SINK_DORIS__TABLE=orders",
		"DORIS_SINK_LOG__FORMAT=json", "DORIS_SINK_JOB__INSTANCE=doris-sink-0", "DORIS_SINK_JOB__SLOTS=4"}
	c, err := Load(LoadOptions{Environ: func() []string { return env }, Need: NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	if c.Job.Name != "orders" || len(c.Kafka.Brokers) != 2 || c.Doris.FE[0] != "https://fe:8030" || c.Log.Format != "json" ||
		c.Job.Instance != "doris-sink-0" {
		t.Fatalf("environment-only config %+v", c)
	}
}
