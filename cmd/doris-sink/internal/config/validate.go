package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
)

// Bounds of delivery.checkpoint_interval. The upper bound is Doris's
// stream_load_default_precommit_timeout_second (3600 s, docs/doris-facts.md §5):
// a checkpoint must be decided and committed well before Doris aborts its
// precommitted transaction.
const (
	MinCheckpointInterval = 100 * time.Millisecond
	MaxCheckpointInterval = time.Hour
)

// Bounds of delivery.fail_fast_after and delivery.retry_backoff_max. The
// backoff starts at 1 s, so its maximum is at least that.
const (
	MaxFailFastAfter   = 10 * time.Minute
	MinRetryBackoffMax = time.Second
	MaxRetryBackoffMax = time.Hour
)

// reservedProperties are Stream Load headers doris-sink sets itself.
var reservedProperties = map[string]string{
	"label":            "doris-sink builds deterministic labels from job.name",
	"two_phase_commit": "set by delivery.guarantee",
	"format":           "use doris.format",
	"txn_id":           "2PC endpoint only",
	"txn_operation":    "2PC endpoint only",
	"group_commit":     "Doris refuses a label together with group_commit (docs/doris-facts.md §9)",
}

var metadataFields = []string{"topic", "partition", "offset", "timestamp"}

// derive fills the defaults that depend on other keys.
func (c *Config) derive() {
	if c.Job.DataDir == "" && c.Job.Name != "" {
		c.Job.DataDir = "./var/" + c.Job.Name
	}
	if c.Kafka.Group == "" && c.Job.Name != "" {
		c.Kafka.Group = "doris-sink-" + c.Job.Name
	}
	if t := c.Kafka.TLS; t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" {
		c.Kafka.TLS.Enabled = true
	}
	c.Doris.FormatSet = c.Doris.Format != ""
	if c.Doris.Format == "" {
		c.Doris.Format = "json"
		if c.Records.Format == RecordsCSV {
			c.Doris.Format = "csv"
		}
	}
	for i, fe := range c.Doris.FE {
		c.Doris.FE[i] = withScheme(fe)
	}
	for i, be := range c.Doris.BE {
		c.Doris.BE[i] = withScheme(be)
	}
}

func withScheme(s string) string {
	if s != "" && !strings.Contains(s, "://") {
		return "http://" + s
	}
	return strings.TrimRight(s, "/")
}

// readSecrets reads password_file keys into the passwords.
func (c *Config) readSecrets(readFile func(string) ([]byte, error)) error {
	var errs errList
	read := func(fileKey, pwKey, path string, pw *Secret) {
		if path == "" {
			return
		}
		if *pw != "" {
			errs.add(&ConflictError{
				Keys:   []string{pwKey + "=" + Redaction, fileKey + "=" + path},
				Reason: "two sources for one password",
				Fix:    "set only " + fileKey + " (preferred) or " + pwKey,
			})
			return
		}
		b, err := readFile(path)
		if err != nil {
			errs.add(&FileError{Key: fileKey, Path: path, Err: err})
			return
		}
		*pw = Secret(strings.TrimRight(string(b), "\r\n"))
	}
	read("doris.password_file", "doris.password", c.Doris.PasswordFile, &c.Doris.Password)
	read("kafka.sasl.password_file", "kafka.sasl.password", c.Kafka.SASL.PasswordFile, &c.Kafka.SASL.Password)
	sr := &c.Records.SchemaRegistry
	read("records.schema_registry.password_file", "records.schema_registry.password", sr.PasswordFile, &sr.Password)
	read("records.schema_registry.bearer_file", "records.schema_registry.bearer", sr.BearerFile, &sr.Bearer)
	return errs.err()
}

// validate checks every key once; need lists the required ones.
func (c *Config) validate(need Need) error {
	var errs errList
	bad := func(key string, v any, allowed string) {
		// Redacted: a URL value may carry user:password (doris.fe).
		errs.add(&KeyError{Key: key, Value: doris.Redact(fmt.Sprint(v)), Allowed: allowed})
	}
	oneOf := func(key, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			bad(key, v, "want one of "+strings.Join(allowed, ", "))
		}
	}

	// job
	if c.Job.Name != "" || need&NeedJob != 0 {
		if err := label.ValidatePrefix(c.Job.Name); err != nil {
			var le *label.Error
			reason := err.Error()
			if errors.As(err, &le) {
				reason = le.Reason
			}
			if c.Job.Name == "" {
				reason = "required: the job name is the Stream Load label prefix (" + reason + ")"
			}
			bad("job.name", c.Job.Name, reason)
		}
	}

	// kafka
	if len(c.Kafka.Brokers) == 0 {
		bad("kafka.brokers", "", "want at least one host:port")
	}
	for _, b := range c.Kafka.Brokers {
		if !isHostPort(b) {
			bad("kafka.brokers", b, "want host:port")
		}
	}
	c.validateTopics(need, bad)
	if c.Kafka.Start.Mode != StartExplicit {
		oneOf("kafka.start", c.Kafka.Start.Mode, StartEarliest, StartLatest, StartCommitted, "or a map of partition: offset")
	}
	if m := c.Kafka.SASL.Mechanism; m != "" {
		oneOf("kafka.sasl.mechanism", m, "plain", "scram-sha-256", "scram-sha-512")
		if c.Kafka.SASL.User == "" {
			bad("kafka.sasl.user", "", "required with kafka.sasl.mechanism="+m)
		}
		if c.Kafka.SASL.Password == "" {
			bad("kafka.sasl.password", "", "required with kafka.sasl.mechanism="+m+"; set kafka.sasl.password_file or "+EnvPrefix+"KAFKA__SASL__PASSWORD")
		}
	}
	checkFile := func(key, path string) {
		if path == "" {
			return
		}
		if _, err := os.Stat(path); err != nil {
			errs.add(&FileError{Key: key, Path: path, Err: err})
		}
	}
	checkFile("kafka.tls.ca_file", c.Kafka.TLS.CAFile)
	if t := c.Kafka.TLS; (t.CertFile == "") != (t.KeyFile == "") {
		errs.add(&ConflictError{
			Keys:   []string{"kafka.tls.cert_file=" + cmp.Or(t.CertFile, "(unset)"), "kafka.tls.key_file=" + cmp.Or(t.KeyFile, "(unset)")},
			Reason: "a client certificate needs both its certificate and its key",
			Fix:    "set both kafka.tls.cert_file and kafka.tls.key_file (mutual TLS), or neither",
		})
	}
	checkFile("kafka.tls.cert_file", c.Kafka.TLS.CertFile)
	checkFile("kafka.tls.key_file", c.Kafka.TLS.KeyFile)

	// doris
	if len(c.Doris.FE) == 0 {
		bad("doris.fe", "", "want at least one FE URL like http://127.0.0.1:8030")
	}
	for _, u := range c.Doris.FE {
		if !isHTTPURL(u) {
			bad("doris.fe", u, "want http(s)://host:port")
		}
	}
	for _, u := range c.Doris.BE {
		if !isHTTPURL(u) {
			bad("doris.be", u, "want http(s)://host:port")
		}
	}
	if !isHostPort(c.Doris.MySQL) {
		bad("doris.mysql", c.Doris.MySQL, "want host:port of the FE MySQL protocol (query_port, 9030)")
	}
	if c.Doris.User == "" {
		bad("doris.user", "", "want a Doris user name")
	}
	if need&NeedTable != 0 {
		if c.Doris.Database == "" {
			bad("doris.database", "", "required: the target database")
		}
		if c.Doris.Table == "" {
			bad("doris.table", "", "required: the target table")
		}
	}
	var ne *doris.NameError
	if db := c.Doris.Database; db != "" && errors.As(doris.ValidateDatabaseName(db), &ne) {
		bad("doris.database", db, ne.Rule)
	}
	if t := c.Doris.Table; t != "" && errors.As(doris.ValidateTableName(t), &ne) {
		bad("doris.table", t, ne.Rule)
	}
	if k := c.Doris.SubLoads; k < 1 || k > label.MaxSubLoads {
		bad("doris.sub_loads", strconv.Itoa(k), fmt.Sprintf("want 1 to %d parallel Stream Loads per table per checkpoint, or auto", label.MaxSubLoads))
	}
	if k := c.Doris.SubLoadsMax; k < 1 || k > label.MaxSubLoads {
		bad("doris.sub_loads_max", strconv.Itoa(k), fmt.Sprintf("want 1 to %d: the largest K of doris.sub_loads: auto", label.MaxSubLoads))
	}
	oneOf("doris.be_spread", c.Doris.BESpread, string(doris.BESpreadFE), string(doris.BESpreadBackends))
	if m := c.Doris.MySQLTLS; m != "" {
		oneOf("doris.mysql_tls", m, string(doris.MySQLTLSRequired), string(doris.MySQLTLSPreferred), string(doris.MySQLTLSOff))
	}
	for _, h := range c.Doris.RedirectAllowHosts {
		if h != "*" && (h == "" || strings.ContainsAny(h, "/:@ ")) {
			bad("doris.redirect_allow_hosts", h, "want host names (no scheme, port or path), or * for any host")
		}
	}
	oneOf("doris.format", c.Doris.Format, "json", "csv")
	for k := range c.Doris.Properties {
		if why, ok := reservedProperties[strings.ToLower(k)]; ok {
			bad("doris.properties."+k, c.Doris.Properties[k], "not allowed: "+why)
		}
	}
	for k, v := range c.Doris.Properties {
		if _, err := doris.ParseCompression(v); strings.EqualFold(k, "compress_type") && err != nil {
			bad("doris.properties."+k, v, "want "+doris.CompressionNames+": doris-sink compresses the streamed body itself "+
				"and sends the header with it (Doris has no zstd); leave it unset to send the body uncompressed")
		}
	}
	checkFile("doris.tls.ca_file", c.Doris.TLS.CAFile)

	// delivery
	oneOf("delivery.guarantee", c.Delivery.Guarantee, ExactlyOnce, AtLeastOnce)
	oneOf("job.coordinator", c.Job.Coordinator, CoordinatorFile, CoordinatorKafka)
	c.validateGroup(bad)
	if d := c.Delivery.CheckpointInterval; d < MinCheckpointInterval || d >= MaxCheckpointInterval {
		bad("delivery.checkpoint_interval", d, fmt.Sprintf("want at least %v and below %v (Doris aborts a precommitted txn after stream_load_default_precommit_timeout_second=3600)", MinCheckpointInterval, MaxCheckpointInterval))
	}
	if c.Delivery.CheckpointMaxBytes < 0 {
		bad("delivery.checkpoint_max_bytes", c.Delivery.CheckpointMaxBytes, "want a size ≥ 0 (0 for no byte cap)")
	}
	if c.Delivery.CheckpointMaxRows < 0 {
		bad("delivery.checkpoint_max_rows", c.Delivery.CheckpointMaxRows, "want an integer ≥ 0 (0 for no row cap)")
	}
	switch {
	case c.Delivery.BatchMode && c.Delivery.Guarantee == ExactlyOnce:
		errs.add(&ConflictError{
			Keys:   []string{"delivery.batch_mode=true", "delivery.guarantee=exactly-once"},
			Reason: "batch mode flushes are not bound to checkpoints, so they cannot be exactly-once (docs/design.md §4); batch mode is not implemented for at-least-once either",
			Fix:    "set delivery.batch_mode: false (delivery.guarantee: at-least-once without batch mode loads one non-2PC Stream Load per checkpoint)",
		})
	case c.Delivery.BatchMode:
		bad("delivery.batch_mode", true, "not implemented: doris-sink has no batch mode yet (size/time-triggered concurrent flushes); "+
			"remove it: delivery.guarantee: at-least-once already loads one non-2PC Stream Load per checkpoint, "+
			"triggered by delivery.checkpoint_interval, checkpoint_max_bytes and checkpoint_max_rows")
	}
	if d := c.Delivery.FailFastAfter; d < 0 || d > MaxFailFastAfter {
		bad("delivery.fail_fast_after", d, fmt.Sprintf("want 0 (exit at the first such failure) up to %v", MaxFailFastAfter))
	}
	if d := c.Delivery.RetryBackoffMax; d < MinRetryBackoffMax || d > MaxRetryBackoffMax {
		bad("delivery.retry_backoff_max", d, fmt.Sprintf("want %v to %v", MinRetryBackoffMax, MaxRetryBackoffMax))
	}

	// records
	oneOf("records.format", c.Records.Format, RecordsJSON, RecordsCSV, RecordsDebezium, RecordsAvro, RecordsProtobuf, RecordsJSONSchema)
	want := "json"
	if c.Records.Format == RecordsCSV {
		want = "csv"
	}
	if slices.Contains([]string{"json", "csv"}, c.Doris.Format) && slices.Contains([]string{RecordsJSON, RecordsCSV, RecordsDebezium, RecordsAvro, RecordsProtobuf, RecordsJSONSchema}, c.Records.Format) && c.Doris.Format != want {
		errs.add(&ConflictError{
			Keys:   []string{"records.format=" + c.Records.Format, "doris.format=" + c.Doris.Format},
			Reason: "records.format " + c.Records.Format + " produces " + want + " rows",
			Fix:    "set doris.format: " + want + " or leave it unset",
		})
	}
	for k, v := range c.Records.MetadataColumns {
		if !slices.Contains(metadataFields, k) {
			bad("records.metadata_columns."+k, v, "want keys "+strings.Join(metadataFields, ", "))
		} else if v == "" {
			bad("records.metadata_columns."+k, v, "want a column name")
		}
	}
	errs.add(c.validateDelete())
	errs.add(c.validateCDC())
	errs.add(c.validateCompose())
	c.validateTables(bad)
	c.validateRecordsRegistry(&errs, checkFile)
	if t := c.Records.DeadLetterTopic; t != "" {
		if err := validTopic(t); err != "" {
			bad("records.dead_letter_topic", t, err)
		} else if slices.Contains(c.Kafka.SourceTopics(), t) {
			bad("records.dead_letter_topic", t, "must differ from kafka.topic (kafka.topics)")
		}
	}
	switch dd := c.Records.DeadLetterDelivery; dd {
	case "", DeadLetterAtLeastOnce:
	case DeadLetterExactlyOnce:
		if c.Records.DeadLetterTopic != "" && c.Job.Coordinator != CoordinatorKafka {
			bad("records.dead_letter_delivery", dd, "exactly_once dead letters are produced in the Kafka transaction "+
				"of their checkpoint's decision, which needs job.coordinator: kafka; with job.coordinator "+
				c.Job.Coordinator+" set records.dead_letter_delivery: at_least_once (a rewind or crash produces a "+
				"checkpoint's dead letters again) or unset records.dead_letter_topic")
		}
	default:
		bad("records.dead_letter_delivery", dd, "want exactly_once or at_least_once")
	}
	if n := c.Records.DeadLetterMaxBisectLoads; n < 0 || n > 1000 {
		bad("records.dead_letter_max_bisect_loads", fmt.Sprint(n), "want 0 (off) to 1000")
	}
	if n := c.Records.MaxRowBytes; n < 1<<10 || n > MaxRowBytes {
		bad("records.max_row_bytes", fmt.Sprint(n), "want 1KiB up to 10GiB (the BE's streaming_load_max_mb, one whole load)")
	}
	for _, b := range []struct {
		key string
		n   int64
	}{{"records.max_key_bytes", c.Records.MaxKeyBytes}, {"records.max_headers_bytes", c.Records.MaxHeadersBytes},
		{"kafka.max_decompressed_batch_bytes", c.Kafka.MaxDecompressedBatchBytes}} {
		if b.n < 1<<10 || b.n > 1<<30 {
			bad(b.key, fmt.Sprint(b.n), "want 1KiB up to 1GiB")
		}
	}
	if c.Records.DeadLetterBufferBytes < 0 {
		bad("records.dead_letter_buffer_bytes", fmt.Sprint(c.Records.DeadLetterBufferBytes), "must not be negative")
	}

	// metrics, log
	if c.Metrics.Listen != "" && !isHostPort(c.Metrics.Listen) {
		bad("metrics.listen", c.Metrics.Listen, "want host:port, or empty to disable")
	}
	if iv := c.Metrics.LogInterval; iv < 0 || (iv > 0 && iv < time.Second) {
		bad("metrics.log_interval", iv, "want 0 (no progress line) or at least 1s")
	}
	oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf("log.format", c.Log.Format, "text", "json")
	return errs.err()
}

func isHostPort(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p >= 0 && p <= 65535
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// validTopic returns "" for a valid Kafka topic name, else what is allowed.
func validTopic(t string) string {
	const allowed = "want 1 to 249 characters of [a-zA-Z0-9._-]"
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return allowed
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return allowed
		}
	}
	return ""
}
