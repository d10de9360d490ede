package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSchemaRegistryKeys(t *testing.T) {
	t.Parallel()
	pw := writeFile(t, "pw", "s3cret\n")
	c := mustLoad(t, merge(minimal, `records:
  format: avro
  envelope: debezium
  time_zone: "+08:00"
  schema_registry:
    urls: [http://127.0.0.1:8081, "https://sr.example:8081"]
    username: u
    password_file: `+pw+"\n"), []string{"DORIS_SINK_RECORDS__SCHEMA_REGISTRY__TLS__CA_FILE=" + pw}, nil, NeedRun)
	r := c.Records
	if r.Format != RecordsAvro || r.Envelope != EnvelopeDebezium || len(r.SchemaRegistry.URLs) != 2 ||
		r.SchemaRegistry.Username != "u" || r.SchemaRegistry.Password.Reveal() != "s3cret" || r.SchemaRegistry.TLS.CAFile != pw {
		t.Fatalf("records %+v", r)
	}
	if c.Doris.Format != "json" {
		t.Fatalf("doris.format %q, want json (a registry format produces JSON rows)", c.Doris.Format)
	}
	loc, err := r.TimeZone()
	if err != nil {
		t.Fatal(err)
	}
	if _, off := time.Date(2024, 1, 1, 0, 0, 0, 0, loc).Zone(); off != 8*3600 {
		t.Fatalf("offset %d, want +8h", off)
	}
	dump, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(dump), "s3cret") {
		t.Fatalf("the registry password leaks into the dump: %s", dump)
	}
}

func TestSchemaRegistryBearerFromEnv(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "records: {format: avro, schema_registry: {urls: [http://h:8081]}}\n"),
		[]string{"DORIS_SINK_RECORDS__SCHEMA_REGISTRY__BEARER=tok"}, nil, NeedRun)
	if c.Records.SchemaRegistry.Bearer.Reveal() != "tok" || c.Records.SchemaRegistry.Bearer.String() != Redaction {
		t.Fatalf("bearer %q", c.Records.SchemaRegistry.Bearer.Reveal())
	}
	if c.Records.SchemaRegistry.MaxWait != 30*time.Second {
		t.Fatalf("default max_wait %v, want 30s", c.Records.SchemaRegistry.MaxWait)
	}
	if tz, err := c.Records.TimeZone(); err != nil || tz != time.UTC {
		t.Fatalf("default time zone %v %v, want UTC", tz, err)
	}
}

func TestSchemaRegistryValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml, key string
	}{
		{"urls required", "records: {format: avro}\n", "records.schema_registry.urls"},
		{"url with credentials", "records: {format: protobuf, schema_registry: {urls: ['http://u:p@h:8081']}}\n", "records.schema_registry.urls"},
		{"url scheme", "records: {format: json_schema, schema_registry: {urls: ['ftp://h']}}\n", "records.schema_registry.urls"},
		{"time zone", "records: {time_zone: Mars/Olympus}\n", "records.time_zone"},
		{"envelope", "records: {format: avro, envelope: maxwell, schema_registry: {urls: [http://h:1]}}\n", "records.envelope"},
		{"max wait", "records: {format: avro, schema_registry: {urls: [http://h:1], max_wait: 11m}}\n", "records.schema_registry.max_wait"},
		{"password without user", "records: {format: avro, schema_registry: {urls: [http://h:1], password: x}}\n", "records.schema_registry.username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
			ke := keyError(t, err, tc.key)
			if strings.Contains(ke.Error(), ":p@") {
				t.Errorf("the URL's password leaks: %v", ke)
			}
		})
	}
	for _, tc := range []struct{ name, yaml, key string }{
		{"envelope with json", "records: {format: json, envelope: debezium}\n", "records.envelope=debezium"},
		{"registry with json", "records: {format: json, schema_registry: {urls: [http://h:1]}}\n", "records.schema_registry.urls=http://h:1"},
		{"bearer and basic", "records: {format: avro, schema_registry: {urls: [http://h:1], username: u, bearer: t}}\n", "records.schema_registry.bearer=" + Redaction},
		{"cert without key", "records: {format: avro, schema_registry: {urls: [http://h:1], tls: {cert_file: /x}}}\n", "records.schema_registry.tls.cert_file=/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
			found := false
			for _, e := range flatten(err) {
				var ce *ConflictError
				if errors.As(e, &ce) && ce.Keys[0] == tc.key {
					found = true
				}
			}
			if !found {
				t.Fatalf("no ConflictError naming %s in %v", tc.key, err)
			}
		})
	}
}

// The Doris Kafka connector's Avro setup (value.converter AvroConverter
// with its registry URL and credentials) loads as records.format avro; with
// converter.mode debezium_ingestion it is a Debezium envelope.
func TestKafkaConnectRegistryConverter(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, `
name: avro_kc
topics: orders
doris.urls: fe1
doris.http.port: 8030
doris.database: demo
value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: http://sr1:8081,http://sr2:8081
value.converter.basic.auth.credentials.source: USER_INFO
value.converter.basic.auth.user.info: u:p4ss
`, nil, nil, NeedRun)
	r := c.Records
	if r.Format != RecordsAvro || strings.Join(r.SchemaRegistry.URLs, ",") != "http://sr1:8081,http://sr2:8081" ||
		r.SchemaRegistry.Username != "u" || r.SchemaRegistry.Password.Reveal() != "p4ss" || r.Envelope != "" {
		t.Fatalf("records %+v", r)
	}
	if !strings.Contains(strings.Join(c.Warnings, "|"), "value.converter.basic.auth.credentials.source: Kafka Connect option ignored") {
		t.Errorf("warnings %q", c.Warnings)
	}
	c = mustLoad(t, "name: j\ntopics: [inventory]\ndoris.database: d\nconverter.mode: debezium_ingestion\n"+
		"value.converter: io.confluent.connect.protobuf.ProtobufConverter\nvalue.converter.schema.registry.url: http://sr:8081\n", nil, nil, NeedRun)
	if c.Records.Format != RecordsProtobuf || c.Records.Envelope != EnvelopeDebezium {
		t.Fatalf("records %+v, want protobuf with the debezium envelope", c.Records)
	}
}
