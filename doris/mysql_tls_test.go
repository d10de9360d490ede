package doris_test

import (
	"context"
	"crypto/tls"
	"errors"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"net"
	"strings"
	"testing"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/doris-sink/doris-sink/doris"
)

// startTLSMySQL serves the MySQL protocol with TLS offered (like fe.conf
// enable_ssl=true) for user root without a password; every query fails
// with "no such query" after a successful handshake. It returns the address.
func startTLSMySQL(t *testing.T, pki *doristest.Certificates) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conf := server.NewServer("5.7.99", gmysql.DEFAULT_COLLATION_ID, gmysql.AUTH_NATIVE_PASSWORD, nil, pki.Server)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				conn, err := conf.NewConn(c, "root", "", noQueries{})
				if err != nil {
					c.Close()
					return
				}
				for !conn.Closed() {
					if conn.HandleCommand() != nil {
						return // HandleCommand closed the connection
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

type noQueries struct{ server.EmptyHandler }

func (noQueries) HandleQuery(string) (*gmysql.Result, error) {
	return nil, gmysql.NewError(gmysql.ER_UNKNOWN_ERROR, "no such query")
}

// When the FE MySQL port offers TLS, Config.TLS is used and verified: the
// right CA connects (the server's answer to the query comes back), another
// CA fails with a certificate error. Against a port without TLS the client
// falls back to plaintext (TestTLSStreamLoad2PCWithCustomCA).
func TestTLSMySQLVerifiedWhenOffered(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	addr := startTLSMySQL(t, pki)
	for _, tc := range []struct {
		name string
		pool *doristest.Certificates
		ok   bool
	}{{"custom CA", pki, true}, {"other CA", doristest.MustCertificates(t, "127.0.0.1"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := doris.NewClient(doris.Config{FE: []string{"https://localhost:1"}, MySQL: addr, User: "root",
				TLS: &tls.Config{RootCAs: tc.pool.Pool}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for range 2 { // a second connection must verify too
				_, err = c.FrontendConfig(context.Background(), "x")
				if tc.ok {
					if err == nil || !strings.Contains(err.Error(), "no such query") || doris.IsCertificateError(err) {
						t.Fatalf("FrontendConfig over MySQL TLS: %v, want the server's own error", err)
					}
				} else if !doris.IsCertificateError(err) {
					t.Fatalf("FrontendConfig with another CA: %v, want a certificate error", err)
				}
			}
			var ce *tls.CertificateVerificationError
			if tc.ok && errors.As(err, &ce) {
				t.Fatalf("unexpected certificate error %v", err)
			}
		})
	}
}
