package doristest

import (
	"crypto/tls"
	"net"
	"os"
	"testing"
)

// handshake runs a TLS handshake between server and client over a pipe and
// returns the server's error and the client's (TLS 1.3: the client learns
// of a refused certificate on its first read).
func handshake(t *testing.T, server, client *tls.Config) (serr, cerr error) {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(a, server)
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte{1})
		}
		a.Close() // not s.Close: its close_notify would wait for a reader
		done <- err
	}()
	c := tls.Client(b, client)
	cerr = c.Handshake()
	if cerr == nil {
		_, cerr = c.Read(make([]byte, 1))
	}
	b.Close()
	return <-done, cerr
}

// ClientCert is signed by the CA that MutualServer requires: a client
// presenting it is accepted, one without a certificate or with a
// certificate of another CA is refused.
func TestClientCertMutualTLS(t *testing.T) {
	t.Parallel()
	pki := MustCertificates(t, "127.0.0.1")
	other := MustCertificates(t, "127.0.0.1")
	cc := pki.MustClientCert(t, "sink")
	client := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: pki.Pool, ServerName: "127.0.0.1", Certificates: certs}
	}
	if serr, cerr := handshake(t, pki.MutualServer(), client(cc.TLS)); serr != nil || cerr != nil {
		t.Fatalf("handshake with the client certificate: server %v, client %v", serr, cerr)
	}
	for name, cfg := range map[string]*tls.Config{
		"no certificate": client(),
		"other CA":       client(other.MustClientCert(t, "sink").TLS),
	} {
		if serr, cerr := handshake(t, pki.MutualServer(), cfg); serr == nil || cerr == nil {
			t.Errorf("%s: server %v, client %v; want both to fail", name, serr, cerr)
		}
	}

	dir := t.TempDir()
	certPath, keyPath, err := cc.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatalf("written pair does not load: %v", err)
	}
	if serr, cerr := handshake(t, pki.MutualServer(), client(pair)); serr != nil || cerr != nil {
		t.Fatalf("handshake with the written pair: server %v, client %v", serr, cerr)
	}
	if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	if _, err := (&Certificates{}).ClientCert("x"); err == nil {
		t.Fatal("ClientCert on a zero Certificates succeeded")
	}
}
