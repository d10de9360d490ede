package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// KafkaTLSConfig maps kafka.tls.*: nil when off; CA pool, the client
// certificate and the server name when set.
func TestKafkaTLSConfig(t *testing.T) {
	t.Parallel()
	if tc, err := KafkaTLSConfig(config.TLS{}); tc != nil || err != nil {
		t.Fatalf("TLS off: %+v, %v; want nil, nil", tc, err)
	}
	pki := doristest.MustCertificates(t, "127.0.0.1")
	dir := t.TempDir()
	cert, key, err := pki.MustClientCert(t, "sink").Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := KafkaTLSConfig(config.TLS{Enabled: true, CAFile: pki.MustWriteCA(t, dir), CertFile: cert, KeyFile: key,
		ServerName: "kafka.internal"})
	if err != nil {
		t.Fatal(err)
	}
	if tc.RootCAs == nil || len(tc.Certificates) != 1 || tc.ServerName != "kafka.internal" {
		t.Fatalf("tls config: roots %v, %d certificates, server name %q", tc.RootCAs != nil, len(tc.Certificates), tc.ServerName)
	}
}

// Bad client certificate files are config errors naming the key at fault:
// cert_file when it cannot be read or holds no certificate, key_file when it
// cannot be read, holds no key or does not match the certificate; a half
// pair names both keys.
func TestKafkaTLSConfigBadClientCert(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	dir := t.TempDir()
	cert, key, err := pki.MustClientCert(t, "sink").Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := pki.MustClientCert(t, "other").Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name, cert, key, wantKey string
	}{
		{"missing cert", missing, key, "kafka.tls.cert_file"},
		{"cert not PEM", garbage, key, "kafka.tls.cert_file"},
		{"key given as cert", key, key, "kafka.tls.cert_file"},
		{"missing key", cert, missing, "kafka.tls.key_file"},
		{"key not PEM", cert, garbage, "kafka.tls.key_file"},
		{"key of another certificate", cert, otherKey, "kafka.tls.key_file"},
	} {
		_, err := KafkaTLSConfig(config.TLS{Enabled: true, CertFile: tc.cert, KeyFile: tc.key})
		var fe *config.FileError
		if !errors.As(err, &fe) || fe.Key != tc.wantKey || !config.IsConfigError(err) {
			t.Errorf("%s: %v, want a config file error naming %s", tc.name, err, tc.wantKey)
		}
	}
	_, err = KafkaTLSConfig(config.TLS{Enabled: true, CertFile: cert})
	if !config.IsConfigError(err) || !strings.Contains(err.Error(), "kafka.tls.cert_file") || !strings.Contains(err.Error(), "kafka.tls.key_file") {
		t.Errorf("half pair: %v, want a config error naming both keys", err)
	}
}
