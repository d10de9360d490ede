package doristest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
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

	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
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
		ca:     ca,
		caKey:  caKey,
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

// ClientCert is a client certificate signed by a Certificates' CA, for
// tests of mutual TLS (a server whose tls.Config has ClientCAs: Pool and
// ClientAuth: tls.RequireAndVerifyClientCert), as users configure
// `kafka.tls.cert_file` / `kafka.tls.key_file`.
type ClientCert struct {
	// CertPEM is the certificate, KeyPEM its private key (PKCS #8), PEM
	// encoded.
	CertPEM, KeyPEM []byte
	// TLS is the pair, ready for tls.Config.Certificates.
	TLS tls.Certificate
}

// ClientCert makes a client certificate for name (its common name) signed
// by c's CA: ECDSA P-256, client authentication only, valid for one hour.
// c must come from NewCertificates.
func (c *Certificates) ClientCert(name string) (*ClientCert, error) {
	if c.ca == nil || c.caKey == nil {
		return nil, errors.New("doristest: ClientCert needs Certificates from NewCertificates")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("doristest: client key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, fmt.Errorf("doristest: client serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(3)), // 1 and 2 are the CA's and the server's
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, &key.PublicKey, c.caKey)
	if err != nil {
		return nil, fmt.Errorf("doristest: client certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("doristest: client key: %w", err)
	}
	return &ClientCert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		TLS:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
	}, nil
}

// Write writes the certificate to dir/client.pem and the key to
// dir/client-key.pem (mode 0600) and returns their paths.
func (cc *ClientCert) Write(dir string) (certPath, keyPath string, err error) {
	certPath, keyPath = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(certPath, cc.CertPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("doristest: write client certificate: %w", err)
	}
	if err := os.WriteFile(keyPath, cc.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("doristest: write client key: %w", err)
	}
	return certPath, keyPath, nil
}

// MustClientCert is ClientCert for tests: it fails t on error.
func (c *Certificates) MustClientCert(t Fataler, name string) *ClientCert {
	t.Helper()
	cc, err := c.ClientCert(name)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

// MutualServer returns a copy of c.Server that requires and verifies a
// client certificate signed by c's CA (tls.RequireAndVerifyClientCert).
func (c *Certificates) MutualServer() *tls.Config {
	s := c.Server.Clone()
	s.ClientCAs = c.Pool
	s.ClientAuth = tls.RequireAndVerifyClientCert
	return s
}
