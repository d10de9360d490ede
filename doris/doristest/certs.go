package doristest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates is a throwaway CA and one server certificate it signed, for
// tests that serve TLS (WithTLS, kfake.TLS) and trust it through a CA file
// or pool, as users configure `doris.tls.ca_file` / `kafka.tls.ca_file`.
type Certificates struct {
	// CAPEM is the CA certificate, PEM encoded.
	CAPEM []byte
	// Pool trusts the CA.
	Pool *x509.CertPool
	// Server serves the certificate (valid for the hosts given).
	Server *tls.Config
}

// NewCertificates makes a CA and a server certificate for hosts (DNS names
// or IP addresses; at least one), ECDSA P-256, valid for one hour.
func NewCertificates(hosts ...string) (*Certificates, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("doristest: NewCertificates needs at least one host")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("doristest: CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "doris-sink test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("doristest: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("doristest: CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("doristest: server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("doristest: server certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &Certificates{
		CAPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Pool:   pool,
		Server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
	}, nil
}

// WriteCA writes the CA certificate to dir/ca.pem and returns its path.
func (c *Certificates) WriteCA(dir string) (string, error) {
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, c.CAPEM, 0o600); err != nil {
		return "", fmt.Errorf("doristest: write CA: %w", err)
	}
	return path, nil
}

// Fataler is the part of testing.TB the Must helpers use.
type Fataler interface {
	Helper()
	Fatal(args ...any)
}

// MustCertificates is NewCertificates for tests: it fails t on error.
func MustCertificates(t Fataler, hosts ...string) *Certificates {
	t.Helper()
	c, err := NewCertificates(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MustWriteCA is WriteCA for tests: it fails t on error.
func (c *Certificates) MustWriteCA(t Fataler, dir string) string {
	t.Helper()
	path, err := c.WriteCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
