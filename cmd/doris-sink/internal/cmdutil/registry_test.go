package cmdutil

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// records.schema_registry.tls.* reach the registry client: a registry
// that requires a client certificate (tls.RequireAndVerifyClientCert)
// serves the schema with ca_file, cert_file and key_file; an unreadable CA
// file is a FileError naming its key.
func TestSchemaRegistryMutualTLS(t *testing.T) {
	t.Parallel()
	certs := doristest.MustCertificates(t, "127.0.0.1")
	reg, err := srtest.NewServer(srtest.WithTLS(certs.MutualServer()))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	id, err := reg.Registry().Register("t-value", sr.Schema{Schema: `{"type":"record","name":"R","fields":[{"name":"id","type":"long"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := certs.MustWriteCA(t, dir)
	cert, key, err := certs.MustClientCert(t, "doris-sink").Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Records: config.Records{Format: config.RecordsAvro, SchemaRegistry: config.SchemaRegistry{
		URLs: []string{reg.URL()}, TLS: config.RegistryTLS{CAFile: ca, CertFile: cert, KeyFile: key}}}}
	c, err := SchemaRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decoder(context.Background(), id); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	cfg.Records.SchemaRegistry.TLS.CAFile = filepath.Join(dir, "missing.pem")
	var fe *config.FileError
	if _, err := SchemaRegistry(cfg); !errors.As(err, &fe) || fe.Key != "records.schema_registry.tls.ca_file" {
		t.Fatalf("missing CA file: %v, want a FileError naming records.schema_registry.tls.ca_file", err)
	}
}
