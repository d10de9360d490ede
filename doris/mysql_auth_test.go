package doris_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"github.com/go-sql-driver/mysql"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

const fakePassword = "s3cret-pw"

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// fakeMySQL is a MySQL server that is not Doris: it authenticates root /
// fakePassword with method, offers TLS only with tlsConf, and answers every
// query "no such query". authed counts logins it accepted: a login with
// caching_sha2_password full authentication, sha256_password or the
// cleartext plugin means the server received the password itself.
func fakeMySQL(t *testing.T, method string, tlsConf *tls.Config) (addr string, authed *atomic.Int32) {
	t.Helper()
	rsaOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conf := server.NewServer("8.0.30", gmysql.DEFAULT_COLLATION_ID, method, rsaKey, tlsConf)
	authed = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				ah := server.NewInMemoryAuthenticationHandler(method)
				if err := ah.AddUser("root", fakePassword); err != nil {
					panic(err)
				}
				conn, err := conf.NewCustomizedConn(c, ah, noQueries{})
				if err != nil {
					c.Close()
					return
				}
				authed.Add(1)
				for !conn.Closed() {
					if conn.HandleCommand() != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), authed
}

func mysqlClient(t *testing.T, addr string, mod func(*doris.Config)) (*doris.Client, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	cfg := doris.Config{FE: []string{"http://127.0.0.1:1"}, MySQL: addr, User: "root", Password: fakePassword,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if mod != nil {
		mod(&cfg)
	}
	c, err := doris.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, logs
}

// Issue 10 finding 2: a server with no TLS that sends its own RSA key
// (caching_sha2_password full authentication) would get
// the password, which go-sql-driver encrypts with that key. The client
// breaks the connection off before answering: ErrInsecureMySQLAuth, the
// server never authenticates. The cleartext plugin is refused by the
// driver. MySQLAllowInsecureAuth lets the first two through (the server
// then logs in: it had the password) with a warning.
func TestMySQLPlaintextPasswordRevealingAuthRefused(t *testing.T) {
	t.Parallel()
	// go-mysql's server refuses sha256_password without TLS; the guard's
	// handling of its RSA key packet is TestAuthGuardFraming.
	for _, method := range []string{gmysql.AUTH_CACHING_SHA2_PASSWORD, gmysql.AUTH_CLEAR_PASSWORD} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			addr, authed := fakeMySQL(t, method, nil)
			c, _ := mysqlClient(t, addr, nil)
			_, err := c.FrontendConfig(context.Background(), "x")
			wantErr := doris.ErrInsecureMySQLAuth
			if method == gmysql.AUTH_CLEAR_PASSWORD {
				wantErr = mysql.ErrCleartextPassword
			}
			if !errors.Is(err, wantErr) {
				t.Fatalf("FrontendConfig against a plaintext %s server: %v, want %v", method, err, wantErr)
			}
			if method != gmysql.AUTH_CLEAR_PASSWORD && !strings.Contains(err.Error(), "doris.mysql_allow_insecure_auth") {
				t.Errorf("refusal does not name the key: %v", err)
			}
			if n := authed.Load(); n != 0 {
				t.Fatalf("the server authenticated %d logins: it received the password", n)
			}
			if method == gmysql.AUTH_CLEAR_PASSWORD {
				return
			}
			ok, logs := mysqlClient(t, addr, func(cfg *doris.Config) { cfg.MySQLAllowInsecureAuth = true })
			if _, err := ok.FrontendConfig(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "no such query") {
				t.Fatalf("with MySQLAllowInsecureAuth: %v, want the server's own answer", err)
			}
			if authed.Load() == 0 || !strings.Contains(logs.String(), "password itself over plaintext") {
				t.Fatalf("allowed insecure auth: authed %d, logs %s", authed.Load(), logs.String())
			}
		})
	}
}

// Doris's own method, mysql_native_password, works over plaintext (off,
// the default without Config.TLS) with a warning once (at debug level here:
// the fake is on loopback, nothing crosses the network), and
// MySQLPlaintext says so.
func TestMySQLNativePasswordPlaintextWarns(t *testing.T) {
	t.Parallel()
	addr, authed := fakeMySQL(t, gmysql.AUTH_NATIVE_PASSWORD, nil)
	c, logs := mysqlClient(t, addr, nil)
	if _, known := c.MySQLPlaintext(); known {
		t.Fatal("MySQLPlaintext known before any connection")
	}
	for range 2 {
		if _, err := c.FrontendConfig(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "no such query") {
			t.Fatalf("native password over plaintext: %v", err)
		}
	}
	if authed.Load() == 0 {
		t.Fatal("no login")
	}
	if plain, known := c.MySQLPlaintext(); !plain || !known {
		t.Errorf("MySQLPlaintext = %t, %t; want true, true", plain, known)
	}
	if n := strings.Count(logs.String(), "level=DEBUG msg=\"doris: MySQL credentials crossed a plaintext connection"); n != 1 {
		t.Errorf("plaintext warnings %d, want 1:\n%s", n, logs.String())
	}
}

// With Config.TLS (doris.tls.* configured) MySQL defaults to required: a
// server without TLS is refused, even one with a harmless method; with
// preferred the client falls back, and caching_sha2_password's RSA step is
// still refused over the plaintext it fell back to. Over TLS the same
// server gets the password (the TLS channel protects it).
func TestMySQLTLSRequiredByDefaultWithTLS(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	tc := &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS12}
	plainAddr, plainAuthed := fakeMySQL(t, gmysql.AUTH_CACHING_SHA2_PASSWORD, nil)

	c, _ := mysqlClient(t, plainAddr, func(cfg *doris.Config) { cfg.TLS = tc })
	if c.MySQLTLS() != doris.MySQLTLSRequired {
		t.Fatalf("MySQLTLS with Config.TLS = %q, want required", c.MySQLTLS())
	}
	if _, err := c.FrontendConfig(context.Background(), "x"); !errors.Is(err, mysql.ErrNoTLS) {
		t.Fatalf("required against a server without TLS: %v, want mysql.ErrNoTLS", err)
	}
	p, _ := mysqlClient(t, plainAddr, func(cfg *doris.Config) { cfg.TLS, cfg.MySQLTLS = tc, doris.MySQLTLSPreferred })
	if _, err := p.FrontendConfig(context.Background(), "x"); !errors.Is(err, doris.ErrInsecureMySQLAuth) {
		t.Fatalf("preferred, fallen back to plaintext, RSA step: %v, want ErrInsecureMySQLAuth", err)
	}
	if n := plainAuthed.Load(); n != 0 {
		t.Fatalf("the plaintext server authenticated %d logins", n)
	}

	tlsAddr, tlsAuthed := fakeMySQL(t, gmysql.AUTH_CACHING_SHA2_PASSWORD, pki.Server)
	s, _ := mysqlClient(t, tlsAddr, func(cfg *doris.Config) { cfg.TLS = tc })
	if _, err := s.FrontendConfig(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "no such query") {
		t.Fatalf("required over TLS: %v", err)
	}
	if plain, known := s.MySQLPlaintext(); plain || !known || tlsAuthed.Load() == 0 {
		t.Fatalf("over TLS: MySQLPlaintext %t %t, authed %d", plain, known, tlsAuthed.Load())
	}
}
