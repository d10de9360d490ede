package cmdutil

import (
	"crypto/tls"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// schemaTypes maps the registry formats of records.format to the schema
// type their records must be written with.
var schemaTypes = map[string]sr.SchemaType{
	config.RecordsAvro:       sr.TypeAvro,
	config.RecordsProtobuf:   sr.TypeProtobuf,
	config.RecordsJSONSchema: sr.TypeJSON,
}

// SchemaRegistry maps records.schema_registry.* and records.time_zone to
// the registry client of a registry format (run decodes with it, check
// asks it for its subjects); nil for the other formats. It does not
// contact the registry. A CA, certificate or key file that cannot be used
// is a *config.FileError naming its key.
func SchemaRegistry(cfg *config.Config) (*registry.Client, error) {
	typ, ok := schemaTypes[cfg.Records.Format]
	if !ok {
		return nil, nil
	}
	s := cfg.Records.SchemaRegistry
	loc, err := cfg.Records.TimeZone()
	if err != nil {
		return nil, &config.KeyError{Key: "records.time_zone", Value: cfg.Records.TimeZoneName, Allowed: err.Error()}
	}
	tc, err := TLSConfig("records.schema_registry.tls.ca_file", s.TLS.CAFile)
	if err != nil {
		return nil, err
	}
	if s.TLS.CertFile != "" || s.TLS.KeyFile != "" {
		cert, err := ClientCertificate("records.schema_registry.tls.cert_file", s.TLS.CertFile,
			"records.schema_registry.tls.key_file", s.TLS.KeyFile)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	maxWait := s.MaxWait
	if maxWait == 0 {
		maxWait = -1 // the key's 0: no retry (registry.Config's 0 is its default)
	}
	c, err := registry.New(registry.Config{URLs: s.URLs, Username: s.Username, Password: s.Password.Reveal(),
		Bearer: s.Bearer.Reveal(), TLS: tc, SchemaType: typ, TimeZone: loc, MaxWait: maxWait,
		MaxResponseBytes: s.MaxResponseBytes, Validate: cfg.Records.JSONSchema.Validate,
		MaxRowBytes: int(cfg.Records.MaxRowBytes)})
	if err != nil {
		return nil, fmt.Errorf("records.format %s: %w", cfg.Records.Format, err)
	}
	return c, nil
}
