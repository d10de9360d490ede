package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAreExactlyOnce(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Delivery.Guarantee != ExactlyOnce || c.Delivery.BatchMode {
		t.Errorf("guarantee %q batch %v, want exactly-once without batch mode", c.Delivery.Guarantee, c.Delivery.BatchMode)
	}
	if c.Delivery.CheckpointInterval != 10*time.Second || c.Delivery.CheckpointMaxBytes != 256<<20 {
		t.Errorf("interval %v max bytes %v", c.Delivery.CheckpointInterval, c.Delivery.CheckpointMaxBytes)
	}
	if c.Job.DataDir != "./var/orders-eos" || c.Kafka.Group != "doris-sink-orders-eos" {
		t.Errorf("derived data_dir %q group %q", c.Job.DataDir, c.Kafka.Group)
	}
	if c.Kafka.Start.Mode != StartEarliest || c.Doris.Format != "json" || c.Doris.User != "root" {
		t.Errorf("start %q format %q user %q", c.Kafka.Start.Mode, c.Doris.Format, c.Doris.User)
	}
	if got := strings.Join(c.Doris.FE, ","); got != "http://127.0.0.1:8030" {
		t.Errorf("fe %s", got)
	}
}

func TestDesignExampleLoads(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, `
job:      { name: orders-eos, data_dir: ./var/orders-eos }
kafka:    { brokers: [127.0.0.1:9092], topic: orders, group: doris-sink-orders, start: earliest }
doris:    { fe: [http://127.0.0.1:8030], mysql: 127.0.0.1:9030, user: root, password: "",
            database: demo, table: orders, format: json, properties: { max_filter_ratio: "0", function_column.sequence_col: ts } }
delivery: { guarantee: exactly-once, checkpoint_interval: 10s, checkpoint_max_bytes: 256MiB, batch_mode: false }
metrics:  { listen: 127.0.0.1:9108 }
`, nil, nil, NeedRun)
	if c.Kafka.Group != "doris-sink-orders" || c.Doris.Properties["max_filter_ratio"] != "0" ||
		c.Doris.Properties["function_column.sequence_col"] != "ts" {
		t.Errorf("got %+v", c)
	}
}

func TestPrecedenceFileEnvFlags(t *testing.T) {
	t.Parallel()
	yaml := merge(minimal, "delivery: {checkpoint_interval: 30s, guarantee: exactly-once}\ndoris: {fe: [http://file:8030], database: demo, table: orders}\n")
	env := []string{
		"DORIS_SINK_DORIS__FE=envfe1:8030,http://envfe2:8030",
		"DORIS_SINK_KAFKA__TOPIC=envtopic",
		"DORIS_SINK_DELIVERY__CHECKPOINT_INTERVAL=20s",
		"DORIS_SINK_JOB__DATA_DIR=/data/x",
		"OTHER=ignored",
	}
	// file < env
	c := mustLoad(t, yaml, env, []string{}, NeedRun)
	if c.Kafka.Topic != "envtopic" || c.Delivery.CheckpointInterval != 20*time.Second || c.Job.DataDir != "/data/x" {
		t.Errorf("env did not override file: %+v %+v", c.Kafka, c.Delivery)
	}
	if got := strings.Join(c.Doris.FE, ","); got != "http://envfe1:8030,http://envfe2:8030" {
		t.Errorf("fe from env = %s", got)
	}
	// env < flags; unset flags keep the file/env value, not the flag default.
	c = mustLoad(t, yaml, env, []string{"--topic=flagtopic", "--fe=http://flagfe:8030"}, NeedRun)
	if c.Kafka.Topic != "flagtopic" || strings.Join(c.Doris.FE, ",") != "http://flagfe:8030" {
		t.Errorf("flags did not override env: %+v %v", c.Kafka.Topic, c.Doris.FE)
	}
	if c.Delivery.CheckpointInterval != 20*time.Second {
		t.Errorf("unset flag default overrode env: %v", c.Delivery.CheckpointInterval)
	}
	// file < flags without env
	c = mustLoad(t, yaml, nil, []string{"--interval=5s"}, NeedRun)
	if c.Delivery.CheckpointInterval != 5*time.Second {
		t.Errorf("interval %v", c.Delivery.CheckpointInterval)
	}
}

func TestBatchModeWithExactlyOnceRefused(t *testing.T) {
	t.Parallel()
	_, err := load(t, merge(minimal, "delivery: {batch_mode: true}\n"), nil, nil, NeedRun)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *ConflictError", err)
	}
	msg := err.Error()
	for _, want := range []string{"delivery.batch_mode", "delivery.guarantee", "at-least-once", "batch_mode: false"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	// Issue 11 ("no option that does nothing"): batch mode is not
	// implemented, so at-least-once refuses it too, naming the key; the way
	// out (batch_mode: false) loads.
	_, err = load(t, merge(minimal, "delivery: {batch_mode: true, guarantee: at-least-once}\n"), nil, nil, NeedRun)
	if err == nil || !strings.Contains(err.Error(), "delivery.batch_mode") || !strings.Contains(err.Error(), "not implemented") {
		t.Errorf("batch mode with at-least-once: %v, want a refusal naming delivery.batch_mode", err)
	}
	c := mustLoad(t, merge(minimal, "delivery: {batch_mode: false, guarantee: at-least-once}\n"), nil, nil, NeedRun)
	if c.Delivery.BatchMode || c.Delivery.Guarantee != AtLeastOnce {
		t.Errorf("got %+v", c.Delivery)
	}
	// Through the Flink names too.
	_, err = load(t, merge(minimal, "sink.enable.batch-mode: true\nsink.enable-2pc: true\n"), nil, nil, NeedRun)
	if !errors.As(err, &ce) {
		t.Fatalf("flink aliases: err = %v, want *ConflictError", err)
	}
}

func TestFlinkAliases(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, `
sink.label-prefix: orders_flink
fenodes: fe1:8030,fe2:8030
benodes: be1:8040
jdbc-url: jdbc:mysql://fe1:9030/demo
username: loader
password: s3cret
table.identifier: demo.orders
sink.enable-2pc: false
sink.buffer-flush.interval: 1min
sink.buffer-flush.max-bytes: 10mb
sink.buffer-flush.max-rows: 50000
sink.properties.format: json
sink.properties.read_json_by_line: true
sink.properties.columns: a,b
sink.max-retries: 3
kafka: {topic: orders}
`, nil, nil, NeedRun)
	checks := []struct{ name, got, want string }{
		{"job.name", c.Job.Name, "orders_flink"},
		{"doris.fe", strings.Join(c.Doris.FE, ","), "http://fe1:8030,http://fe2:8030"},
		{"doris.be", strings.Join(c.Doris.BE, ","), "http://be1:8040"},
		{"doris.mysql", c.Doris.MySQL, "fe1:9030"},
		{"doris.user", c.Doris.User, "loader"},
		{"doris.password", c.Doris.Password.Reveal(), "s3cret"},
		{"doris.database", c.Doris.Database, "demo"},
		{"doris.table", c.Doris.Table, "orders"},
		{"delivery.guarantee", c.Delivery.Guarantee, AtLeastOnce},
		{"delivery.checkpoint_interval", c.Delivery.CheckpointInterval.String(), "1m0s"},
		{"delivery.checkpoint_max_bytes", fmt.Sprint(int64(c.Delivery.CheckpointMaxBytes)), "10000000"},
		{"delivery.checkpoint_max_rows", fmt.Sprint(c.Delivery.CheckpointMaxRows), "50000"},
		{"doris.format", c.Doris.Format, "json"},
		{"doris.properties.read_json_by_line", c.Doris.Properties["read_json_by_line"], "true"},
		{"doris.properties.columns", c.Doris.Properties["columns"], "a,b"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "sink.max-retries") {
		t.Errorf("warnings %q", c.Warnings)
	}
	c = mustLoad(t, merge(minimal, "sink.enable-2pc: true\n"), nil, nil, NeedRun)
	if c.Delivery.Guarantee != ExactlyOnce {
		t.Errorf("enable-2pc true → %s", c.Delivery.Guarantee)
	}
}

func TestAliasConflictsAndErrors(t *testing.T) {
	t.Parallel()
	_, err := load(t, merge(minimal, "sink.label-prefix: other\n"), nil, nil, NeedRun)
	var ce *ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "job.name") || !strings.Contains(err.Error(), "sink.label-prefix") {
		t.Errorf("conflict: %v", err)
	}
	// Same value twice is fine.
	mustLoad(t, merge(minimal, "sink.label-prefix: orders-eos\n"), nil, nil, NeedRun)
	_, err = load(t, merge(minimal, "password: a\ndoris: {password: b}\n"), nil, nil, 0)
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "a,") || strings.Contains(err.Error(), "=b") {
		t.Errorf("password conflict must be redacted: %v", err)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"table.identifier: nodot\n", "table.identifier"},
		{"sink.enable-2pc: maybe\n", "sink.enable-2pc"},
		{"jdbc-url: http://x\n", "jdbc-url"},
		{"sink.label-prefix: 'bad prefix'\n", "job.name"},
		{"sink.buffer-flush.interval: soon\n", "delivery.checkpoint_interval (set by sink.buffer-flush.interval)"},
	} {
		_, err := load(t, "kafka: {topic: t}\n"+tc.yaml, nil, nil, 0)
		keyError(t, err, tc.key)
	}
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		env        []string
		need       Need
		key        string
	}{
		{"job required", "kafka: {topic: t}\ndoris: {database: d, table: t}\n", nil, NeedRun, "job.name"},
		{"job charset", "job: {name: 'a.b'}\n", nil, 0, "job.name"},
		{"job too long", "job: {name: " + strings.Repeat("x", 50) + "}\n", nil, 0, "job.name"},
		{"brokers empty", merge(minimal, "kafka: {brokers: [], topic: orders}\n"), nil, NeedRun, "kafka.brokers"},
		{"broker no port", merge(minimal, "kafka: {brokers: [host], topic: orders}\n"), nil, NeedRun, "kafka.brokers"},
		{"topic required", "job: {name: j}\ndoris: {database: d, table: t}\n", nil, NeedRun, "kafka.topic"},
		{"topic charset", merge(minimal, "kafka: {topic: 'a b'}\n"), nil, NeedRun, "kafka.topic"},
		{"start mode", merge(minimal, "kafka: {start: beginning}\n"), nil, NeedRun, "kafka.start"},
		{"start partition", merge(minimal, "kafka: {start: {x: 1}}\n"), nil, NeedRun, "kafka.start.x"},
		{"start offset", merge(minimal, "kafka: {start: {0: -5}}\n"), nil, NeedRun, "kafka.start.0"},
		{"sasl mechanism", merge(minimal, "kafka: {sasl: {mechanism: gssapi, user: u, password: p}}\n"), nil, NeedRun, "kafka.sasl.mechanism"},
		{"sasl user", merge(minimal, "kafka: {sasl: {mechanism: plain, password: p}}\n"), nil, NeedRun, "kafka.sasl.user"},
		{"sasl password", merge(minimal, "kafka: {sasl: {mechanism: plain, user: u}}\n"), nil, NeedRun, "kafka.sasl.password"},
		{"fe empty", merge(minimal, "doris: {fe: []}\n"), nil, NeedRun, "doris.fe"},
		{"fe scheme", merge(minimal, "doris: {fe: ['ftp://x:1']}\n"), nil, NeedRun, "doris.fe"},
		{"fe userinfo", merge(minimal, "doris: {fe: ['http://u:p@x:1']}\n"), nil, NeedRun, "doris.fe"},
		{"be", merge(minimal, "doris: {be: ['ftp://x:1']}\n"), nil, NeedRun, "doris.be"},
		{"mysql", merge(minimal, "doris: {mysql: nope}\n"), nil, NeedRun, "doris.mysql"},
		{"user", merge(minimal, "doris: {user: ''}\n"), nil, NeedRun, "doris.user"},
		{"database", "job: {name: j}\nkafka: {topic: t}\ndoris: {table: t}\n", nil, NeedRun, "doris.database"},
		{"table", "job: {name: j}\nkafka: {topic: t}\ndoris: {database: d}\n", nil, NeedRun, "doris.table"},
		{"format", merge(minimal, "doris: {format: parquet}\n"), nil, NeedRun, "doris.format"},
		{"reserved property", merge(minimal, "doris: {properties: {label: x}}\n"), nil, NeedRun, "doris.properties.label"},
		{"group_commit property", merge(minimal, "doris: {properties: {group_commit: async_mode}}\n"), nil, NeedRun, "doris.properties.group_commit"},
		{"compress_type zstd", merge(minimal, "doris: {properties: {compress_type: zstd}}\n"), nil, NeedRun, "doris.properties.compress_type"},
		{"compress_type bz2", merge(minimal, "doris: {properties: {compress_type: bz2}}\n"), nil, NeedRun, "doris.properties.compress_type"},
		{"guarantee", merge(minimal, "delivery: {guarantee: exactly_twice}\n"), nil, NeedRun, "delivery.guarantee"},
		{"interval syntax", merge(minimal, "delivery: {checkpoint_interval: ten}\n"), nil, NeedRun, "delivery.checkpoint_interval"},
		{"interval too long", merge(minimal, "delivery: {checkpoint_interval: 2h}\n"), nil, NeedRun, "delivery.checkpoint_interval"},
		{"interval too short", merge(minimal, "delivery: {checkpoint_interval: 1ms}\n"), nil, NeedRun, "delivery.checkpoint_interval"},
		{"size", merge(minimal, "delivery: {checkpoint_max_bytes: lots}\n"), nil, NeedRun, "delivery.checkpoint_max_bytes"},
		{"size negative", merge(minimal, "delivery: {checkpoint_max_bytes: -1}\n"), nil, NeedRun, "delivery.checkpoint_max_bytes"},
		{"rows", merge(minimal, "delivery: {checkpoint_max_rows: -1}\n"), nil, NeedRun, "delivery.checkpoint_max_rows"},
		{"rows syntax", merge(minimal, "delivery: {checkpoint_max_rows: many}\n"), nil, NeedRun, "delivery.checkpoint_max_rows"},
		{"batch bool", merge(minimal, "delivery: {batch_mode: sometimes}\n"), nil, NeedRun, "delivery.batch_mode"},
		{"records format", merge(minimal, "records: {format: xml}\n"), nil, NeedRun, "records.format"},
		{"metadata key", merge(minimal, "records: {metadata_columns: {headers: h}}\n"), nil, NeedRun, "records.metadata_columns.headers"},
		{"dead letter same topic", merge(minimal, "records: {dead_letter_topic: orders}\n"), nil, NeedRun, "records.dead_letter_topic"},
		{"dead letter charset", merge(minimal, "records: {dead_letter_topic: 'a/b'}\n"), nil, NeedRun, "records.dead_letter_topic"},
		{"metrics", merge(minimal, "metrics: {listen: nope}\n"), nil, NeedRun, "metrics.listen"},
		{"log level", merge(minimal, "log: {level: verbose}\n"), nil, NeedRun, "log.level"},
		{"log format", merge(minimal, "log: {format: xml}\n"), nil, NeedRun, "log.format"},
		{"env bool", minimal, []string{"DORIS_SINK_KAFKA__TLS__ENABLED=yes please"}, NeedRun, "kafka.tls.enabled"},
		{"string wants scalar", merge(minimal, "doris: {table: [a, b]}\n"), nil, NeedRun, "doris.table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tc.yaml, tc.env, nil, tc.need)
			ke := keyError(t, err, tc.key)
			if ke.Allowed == "" {
				t.Errorf("%v: no allowed values", ke)
			}
			if !IsConfigError(err) {
				t.Errorf("IsConfigError(%v) = false", err)
			}
		})
	}
}

func TestOtherErrors(t *testing.T) {
	t.Parallel()
	var ue *UnknownKeyError
	if _, err := load(t, merge(minimal, "kafka: {topik: x}\n"), nil, nil, 0); !errors.As(err, &ue) || ue.Key != "kafka.topik" {
		t.Errorf("unknown file key: %v", err)
	}
	if _, err := load(t, minimal, []string{"DORIS_SINK_DORIS__TABEL=x"}, nil, 0); !errors.As(err, &ue) || ue.Key != "doris.tabel" {
		t.Errorf("unknown env key: %v", err)
	}
	var fe *FileError
	if _, err := Load(LoadOptions{File: "/nonexistent/c.yaml"}); !errors.As(err, &fe) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := load(t, "job: [unclosed\n", nil, nil, 0); !errors.As(err, &fe) {
		t.Errorf("bad yaml: %v", err)
	}
	if _, err := load(t, merge(minimal, "doris: {password_file: /nonexistent/pw}\n"), nil, nil, 0); !errors.As(err, &fe) || fe.Key != "doris.password_file" {
		t.Errorf("missing password file: %v", err)
	}
	if _, err := load(t, merge(minimal, "kafka: {tls: {ca_file: /nonexistent/ca.pem}}\n"), nil, nil, 0); !errors.As(err, &fe) || fe.Key != "kafka.tls.ca_file" {
		t.Errorf("missing ca file: %v", err)
	}
	if _, err := load(t, merge(minimal, "records: {format: csv}\ndoris: {format: json}\n"), nil, nil, 0); !errors.As(err, new(*ConflictError)) {
		t.Errorf("format mismatch: %v", err)
	}
	// Several errors are all reported.
	_, err := load(t, "job: {name: ''}\nlog: {level: x, format: y}\n", nil, nil, NeedJob)
	if n := len(flatten(err)); n != 3 {
		t.Errorf("got %d errors, want 3: %v", n, err)
	}
}

func TestStartAndTLSForms(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "kafka: {topic: orders, start: {0: 100, 2: 7}, tls: true}\n"), nil, nil, NeedRun)
	if c.Kafka.Start.Mode != StartExplicit || c.Kafka.Start.Offsets[0] != 100 || c.Kafka.Start.Offsets[2] != 7 {
		t.Errorf("start %+v", c.Kafka.Start)
	}
	if !c.Kafka.TLS.Enabled {
		t.Error("kafka.tls: true not accepted")
	}
	// env replaces the file's map by a mode
	c = mustLoad(t, merge(minimal, "kafka: {topic: orders, start: {0: 100}}\n"), []string{"DORIS_SINK_KAFKA__START=latest"}, nil, NeedRun)
	if c.Kafka.Start.Mode != StartLatest || len(c.Kafka.Start.Offsets) != 0 {
		t.Errorf("start %+v", c.Kafka.Start)
	}
	c = mustLoad(t, merge(minimal, "records: {format: csv}\n"), nil, nil, NeedRun)
	if c.Doris.Format != "csv" {
		t.Errorf("doris.format derived %q, want csv", c.Doris.Format)
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	pw := writeFile(t, "pw", "hunter2\n")
	c := mustLoad(t, merge(minimal, "doris: {password_file: "+pw+"}\nkafka: {sasl: {mechanism: scram-sha-256, user: u, password: kafkapw}}\n"), nil, nil, NeedRun)
	if c.Doris.Password.Reveal() != "hunter2" || c.Kafka.SASL.Password.Reveal() != "kafkapw" {
		t.Fatalf("passwords not read")
	}
	b, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("cfg", "config", c, "pw", c.Doris.Password)
	for _, out := range []string{string(b), fmt.Sprintf("%v %+v %#v", c, c, c), buf.String()} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "kafkapw") {
			t.Errorf("secret leaked: %s", out)
		}
	}
	if !strings.Contains(string(b), `"password":"\u003credacted\u003e"`) && !strings.Contains(string(b), `"password":"<redacted>"`) {
		t.Errorf("json dump lacks redaction: %s", b)
	}
	// Redacted is a copy: the original still has the secret.
	if c.Doris.Password.Reveal() != "hunter2" {
		t.Error("Redacted changed the original")
	}
	_, err = load(t, merge(minimal, "doris: {password: x, password_file: "+pw+"}\n"), nil, nil, 0)
	if !errors.As(err, new(*ConflictError)) || strings.Contains(err.Error(), "x,") {
		t.Errorf("password + password_file: %v", err)
	}
}

func TestParseSizeAndDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ByteSize{"256MiB": 256 << 20, "1GiB": 1 << 30, "64 KB": 64000, "1024": 1024, "10mb": 10e6, "2G": 2 << 30, "0": 0, "5B": 5} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1KiB", "1.5GiB", "99999999999TiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	if s := ByteSize(256 << 20).String(); s != "256MiB" {
		t.Errorf("String = %s", s)
	}
	for in, want := range map[string]time.Duration{"10s": 10 * time.Second, "1min": time.Minute, "10 s": 10 * time.Second, "500": 500 * time.Millisecond, "2 hours": 2 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseDuration("10 fortnights"); err == nil {
		t.Error("unknown unit accepted")
	}
}

func TestKeysAndAliasesDocumented(t *testing.T) {
	t.Parallel()
	for _, k := range Keys() {
		if k.Doc == "" {
			t.Errorf("%s has no doc", k.Name)
		}
	}
	if len(Aliases()) < 10 {
		t.Errorf("aliases table too short")
	}
}

// delivery.fail_fast_after and delivery.retry_backoff_max (issue 11):
// defaults 30s and 60s; out-of-range values are refused naming the key.
func TestFailFastAndBackoffKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Delivery.FailFastAfter != 30*time.Second || c.Delivery.RetryBackoffMax != time.Minute {
		t.Errorf("defaults %v, %v; want 30s, 1m", c.Delivery.FailFastAfter, c.Delivery.RetryBackoffMax)
	}
	c = mustLoad(t, merge(minimal, "delivery: {fail_fast_after: 0s, retry_backoff_max: 5m}\n"), nil, nil, NeedRun)
	if c.Delivery.FailFastAfter != 0 || c.Delivery.RetryBackoffMax != 5*time.Minute {
		t.Errorf("got %v, %v; want 0s, 5m", c.Delivery.FailFastAfter, c.Delivery.RetryBackoffMax)
	}
	for yaml, key := range map[string]string{
		"delivery: {fail_fast_after: 11m}\n":     "delivery.fail_fast_after",
		"delivery: {retry_backoff_max: 500ms}\n": "delivery.retry_backoff_max",
	} {
		if _, err := load(t, merge(minimal, yaml), nil, nil, NeedRun); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v, want a refusal naming %s", yaml, err, key)
		}
	}
}

// compress_type gz and lz4 (any case, also through the Flink alias
// sink.properties.compress_type) load: the sink compresses the body.
func TestCompressTypeAccepted(t *testing.T) {
	t.Parallel()
	for _, y := range []string{"doris: {properties: {compress_type: gz}}\n", "doris: {properties: {compress_type: LZ4}}\n",
		"sink.properties.compress_type: gz\n"} {
		c := mustLoad(t, merge(minimal, y), nil, nil, NeedRun)
		if v := c.Doris.Properties["compress_type"]; v == "" {
			t.Errorf("%q: properties %v", y, c.Doris.Properties)
		}
	}
}
