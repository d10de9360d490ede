package config

import (
	"cmp"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// Record formats read through a Schema Registry (records.format,
// docs/configuration.md "Schema Registry formats").
const (
	RecordsAvro       = "avro"
	RecordsProtobuf   = "protobuf"
	RecordsJSONSchema = "json_schema"
)

// EnvelopeDebezium is records.envelope for Debezium change events in a
// registry format.
const EnvelopeDebezium = "debezium"

// IsRegistryFormat reports whether records.format f is read through a
// Schema Registry.
func IsRegistryFormat(f string) bool {
	return f == RecordsAvro || f == RecordsProtobuf || f == RecordsJSONSchema
}

// SchemaRegistry is records.schema_registry: where the schemas of the
// registry formats come from.
type SchemaRegistry struct {
	// URLs are the registry base URLs, tried in order.
	URLs []string `json:"urls,omitempty"`
	// Username and Password are HTTP Basic credentials.
	Username     string `json:"username,omitempty"`
	Password     Secret `json:"password,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
	// Bearer is a bearer token (instead of Basic credentials).
	Bearer     Secret `json:"bearer,omitempty"`
	BearerFile string `json:"bearer_file,omitempty"`
	// MaxWait is the backoff budget per new schema id
	// (records.schema_registry.max_wait).
	MaxWait time.Duration `json:"max_wait"`
	// MaxResponseBytes bounds one registry answer
	// (records.schema_registry.max_response_bytes).
	MaxResponseBytes int64 `json:"max_response_bytes"`
	// TLS configures https URLs.
	TLS RegistryTLS `json:"tls"`
}

// JSONSchemaRecords is records.json_schema: options of records.format
// json_schema.
type JSONSchemaRecords struct {
	// Validate checks each record against its registry schema
	// (records.json_schema.validate); Avro and Protobuf records are checked
	// by decoding them.
	Validate bool `json:"validate"`
}

// MaxRowBytes bounds records.max_row_bytes: the BE's streaming_load_max_mb
// default (10240 MB), the most one Stream Load takes.
const MaxRowBytes = 10 << 30

// MaxRegistryWait bounds records.schema_registry.max_wait.
const MaxRegistryWait = 10 * time.Minute

// RegistryTLS is records.schema_registry.tls.
type RegistryTLS struct {
	// CAFile is a PEM CA bundle (default: system roots).
	CAFile string `json:"ca_file,omitempty"`
	// CertFile and KeyFile are the client certificate (mutual TLS).
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
}

func decodeSchemaRegistry(d *decoder) SchemaRegistry {
	return SchemaRegistry{
		URLs:             d.list("records.schema_registry.urls"),
		Username:         d.str("records.schema_registry.username"),
		Password:         Secret(d.str("records.schema_registry.password")),
		PasswordFile:     d.str("records.schema_registry.password_file"),
		Bearer:           Secret(d.str("records.schema_registry.bearer")),
		BearerFile:       d.str("records.schema_registry.bearer_file"),
		MaxWait:          d.duration("records.schema_registry.max_wait"),
		MaxResponseBytes: int64(d.size("records.schema_registry.max_response_bytes")),
		TLS: RegistryTLS{
			CAFile:   d.str("records.schema_registry.tls.ca_file"),
			CertFile: d.str("records.schema_registry.tls.cert_file"),
			KeyFile:  d.str("records.schema_registry.tls.key_file"),
		},
	}
}

// offsetZone matches a fixed UTC offset like +08:00 or -05:30.
var offsetZone = regexp.MustCompile(`^[+-](0[0-9]|1[0-4]):[0-5][0-9]$`)

// TimeZone returns the location of records.time_zone: an IANA name from
// the system's zoneinfo ("Asia/Shanghai"), "UTC", or a fixed offset
// "+08:00".
func (r Records) TimeZone() (*time.Location, error) {
	return parseTimeZone(r.TimeZoneName)
}

func parseTimeZone(name string) (*time.Location, error) {
	switch {
	case name == "" || strings.EqualFold(name, "UTC"):
		return time.UTC, nil
	case offsetZone.MatchString(name):
		h := int(name[1]-'0')*10 + int(name[2]-'0')
		m := int(name[4]-'0')*10 + int(name[5]-'0')
		off := h*3600 + m*60
		if name[0] == '-' {
			off = -off
		}
		return time.FixedZone(name, off), nil
	}
	return time.LoadLocation(name)
}

// validateRecordsRegistry checks records.envelope, records.time_zone and
// records.schema_registry.* against records.format.
func (c *Config) validateRecordsRegistry(errs *errList, checkFile func(key, path string)) {
	r := c.Records
	if r.Envelope != "" && r.Envelope != EnvelopeDebezium {
		errs.add(&KeyError{Key: "records.envelope", Value: r.Envelope, Allowed: "want debezium, or leave it unset"})
	}
	if r.Envelope != "" && !IsRegistryFormat(r.Format) {
		errs.add(&ConflictError{Keys: []string{"records.envelope=" + r.Envelope, "records.format=" + r.Format},
			Reason: "records.envelope applies to the registry formats avro, protobuf and json_schema",
			Fix:    "for Debezium JSON set records.format: debezium and drop records.envelope"})
	}
	if _, err := parseTimeZone(r.TimeZoneName); err != nil {
		errs.add(&KeyError{Key: "records.time_zone", Value: r.TimeZoneName, Allowed: "want UTC, an IANA zone name (Asia/Shanghai) the system's zoneinfo knows, or an offset like +08:00"})
	}
	if r.JSONSchema.Validate && r.Format != RecordsJSONSchema {
		errs.add(&ConflictError{Keys: []string{"records.json_schema.validate=true", "records.format=" + r.Format},
			Reason: "records.json_schema.validate checks JSON Schema records; Avro and Protobuf records are checked by decoding them, JSON and CSV have no schema",
			Fix:    "set records.format: json_schema, or drop records.json_schema.validate"})
	}
	sr := r.SchemaRegistry
	if !IsRegistryFormat(r.Format) {
		if len(sr.URLs) > 0 {
			errs.add(&ConflictError{Keys: []string{"records.schema_registry.urls=" + strings.Join(sr.URLs, ","), "records.format=" + r.Format},
				Reason: "only the registry formats avro, protobuf and json_schema read schemas from a registry",
				Fix:    "set records.format to one of them, or drop records.schema_registry"})
		}
		return
	}
	if len(sr.URLs) == 0 {
		errs.add(&KeyError{Key: "records.schema_registry.urls", Value: "", Allowed: "required with records.format " + r.Format + ": the registry base URLs, like http://127.0.0.1:8081"})
	}
	for _, u := range sr.URLs {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
			errs.add(&KeyError{Key: "records.schema_registry.urls", Value: doris.Redact(u), Allowed: "want http(s)://host:port without credentials (set records.schema_registry.username and password_file)"})
		}
	}
	if sr.Bearer != "" && (sr.Username != "" || sr.Password != "") {
		errs.add(&ConflictError{Keys: []string{"records.schema_registry.bearer=" + Redaction, "records.schema_registry.username=" + sr.Username},
			Reason: "two ways to authenticate to the registry", Fix: "set username/password or bearer, not both"})
	}
	if sr.MaxResponseBytes < 1<<10 || sr.MaxResponseBytes > 1<<30 {
		errs.add(&KeyError{Key: "records.schema_registry.max_response_bytes", Value: fmt.Sprint(sr.MaxResponseBytes), Allowed: "want 1KiB up to 1GiB"})
	}
	if sr.MaxWait < 0 || sr.MaxWait > MaxRegistryWait {
		errs.add(&KeyError{Key: "records.schema_registry.max_wait", Value: sr.MaxWait.String(), Allowed: fmt.Sprintf("want 0 (refuse at the first failure) up to %v", MaxRegistryWait)})
	}
	if sr.Password != "" && sr.Username == "" {
		errs.add(&KeyError{Key: "records.schema_registry.username", Value: "", Allowed: "required with records.schema_registry.password"})
	}
	checkFile("records.schema_registry.tls.ca_file", sr.TLS.CAFile)
	if (sr.TLS.CertFile == "") != (sr.TLS.KeyFile == "") {
		errs.add(&ConflictError{
			Keys:   []string{"records.schema_registry.tls.cert_file=" + cmp.Or(sr.TLS.CertFile, "(unset)"), "records.schema_registry.tls.key_file=" + cmp.Or(sr.TLS.KeyFile, "(unset)")},
			Reason: "a client certificate needs both its certificate and its key",
			Fix:    "set both, or neither",
		})
	}
	checkFile("records.schema_registry.tls.cert_file", sr.TLS.CertFile)
	checkFile("records.schema_registry.tls.key_file", sr.TLS.KeyFile)
}
