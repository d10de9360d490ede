package config

import (
	"log/slog"
	"maps"

	"github.com/doris-sink/doris-sink/doris"
)

// Redaction is what a set secret prints as.
const Redaction = "<redacted>"

// Secret is a password. It prints, marshals and logs as Redaction (or ""
// when empty), so a Config can be dumped or logged without leaking it; use
// Reveal to get the value.
type Secret string

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns Redaction for a set secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redaction
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return s.String() }

// MarshalText returns String.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue returns String.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Redacted returns a deep copy of c whose secrets are replaced by
// Redaction, for `-o json` dumps and logs.
func (c *Config) Redacted() *Config {
	r := *c
	r.Kafka.Brokers = append([]string(nil), c.Kafka.Brokers...)
	r.Kafka.Start.Offsets = maps.Clone(c.Kafka.Start.Offsets)
	r.Doris.FE = append([]string(nil), c.Doris.FE...)
	r.Doris.BE = append([]string(nil), c.Doris.BE...)
	r.Doris.RedirectAllowHosts = append([]string(nil), c.Doris.RedirectAllowHosts...)
	r.Doris.Properties = maps.Clone(c.Doris.Properties)
	r.Records.MetadataColumns = maps.Clone(c.Records.MetadataColumns)
	r.Warnings = append([]string(nil), c.Warnings...)
	r.Doris.Password = Secret(c.Doris.Password.String())
	r.Kafka.SASL.Password = Secret(c.Kafka.SASL.Password.String())
	r.Records.SchemaRegistry.URLs = append([]string(nil), c.Records.SchemaRegistry.URLs...)
	r.Records.SchemaRegistry.Password = Secret(c.Records.SchemaRegistry.Password.String())
	r.Records.SchemaRegistry.Bearer = Secret(c.Records.SchemaRegistry.Bearer.String())
	for _, l := range [][]string{r.Kafka.Brokers, r.Doris.FE, r.Doris.BE, r.Doris.RedirectAllowHosts, r.Records.SchemaRegistry.URLs} {
		for i, v := range l {
			l[i] = doris.Redact(v) // a user:password@ in an address
		}
	}
	r.Doris.MySQL = doris.Redact(c.Doris.MySQL)
	r.Metrics.Listen = doris.Redact(c.Metrics.Listen)
	return &r
}

// LogValue logs the job, source and target, never a secret.
func (c *Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("job", c.Job.Name),
		slog.String("data_dir", c.Job.DataDir),
		slog.String("topic", c.Kafka.Topic),
		slog.String("table", c.Doris.Database+"."+c.Doris.Table),
		slog.String("guarantee", c.Delivery.Guarantee),
	)
}
