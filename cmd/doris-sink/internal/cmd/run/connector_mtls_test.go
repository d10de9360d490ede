package run

import (
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// run must hand the Kafka client certificate to the connector (it once
// built the TLS config from the CA file alone, so mTLS brokers refused run
// while check and verify worked).
func TestConnectorConfigCarriesKafkaClientCertificate(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	dir := t.TempDir()
	cc := pki.MustClientCert(t, "doris-sink")
	certFile, keyFile, err := cc.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	cfg.Kafka.Topic = "orders"
	cfg.Kafka.TLS = config.TLS{Enabled: true, CAFile: pki.MustWriteCA(t, dir), CertFile: certFile, KeyFile: keyFile,
		ServerName: "127.0.0.1"}
	kc, err := connectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kc.TLS == nil || len(kc.TLS.Certificates) != 1 || kc.TLS.RootCAs == nil || kc.TLS.ServerName != "127.0.0.1" {
		t.Fatalf("connector TLS = %+v, want the CA, the client certificate and the server name", kc.TLS)
	}
}
