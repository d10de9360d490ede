package doris_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// newTLSEmulated starts doristest serving FE and BE over https with a
// certificate from pki, with demo.orders, and returns it and a client
// configured with tc (nil: system roots only).
func newTLSEmulated(t *testing.T, pki *doristest.Certificates, tc *tls.Config, direct bool) (*doristest.Server, *doris.Client) {
	t.Helper()
	s, err := doristest.NewServer(doristest.SeedDatabases(emuDB), doristest.User("loader", "pw-emu"), doristest.WithTLS(pki.Server))
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(s.Close)
	ddl := "CREATE TABLE orders (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	if err := s.CreateTable(emuDB, ddl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	cfg := doris.Config{FE: []string{s.FEURL()}, MySQL: s.MySQLAddr(), User: "loader", Password: "pw-emu", MaxRetries: 1, TLS: tc,
		MySQLTLS: doris.MySQLTLSPreferred}
	if direct {
		cfg.BE = []string{s.BEURL()}
	}
	c, err := doris.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// HTTPS with a custom CA: the FE answers 307 to the https BE (§1.2; the
// emulator keeps the BE's scheme, see doristest.WithTLS), Stream Load 2PC
// precommits (§3) and the commit makes the rows visible. The FE MySQL port
// has no TLS: with MySQLTLS preferred the MySQL side falls back to
// plaintext instead of failing (the default with Config.TLS, required,
// refuses it: TestMySQLTLSRequiredByDefaultWithTLS).
func TestTLSStreamLoad2PCWithCustomCA(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "localhost", "127.0.0.1")
	for _, direct := range []bool{false, true} {
		name := map[bool]string{false: "via FE 307", true: "direct BE"}[direct]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, c := newTLSEmulated(t, pki, &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS12}, direct)
			if !strings.HasPrefix(s.FEURL(), "https://") || !strings.HasPrefix(s.BEURL(), "https://") {
				t.Fatalf("FE %s BE %s: want https", s.FEURL(), s.BEURL())
			}
			ctx := context.Background()
			res, err := c.StreamLoad(ctx, jsonLoad("tls:1"), strings.NewReader(twoRows))
			if err != nil {
				t.Fatalf("StreamLoad over https: %v", err)
			}
			if res.TwoPhaseCommit != "true" || res.NumberLoadedRows != 2 || res.TxnID <= 0 {
				t.Fatalf("result %+v", res)
			}
			if st, err := c.LoadState(ctx, emuDB, "tls:1"); err != nil || st != doris.TxnPrecommitted {
				t.Fatalf("LoadState = %q, %v", st, err)
			}
			if err := c.CommitTxn(ctx, emuDB, res.TxnID); err != nil {
				t.Fatalf("CommitTxn over https: %v", err)
			}
			rows, err := s.Rows(emuDB, "orders")
			if err != nil || len(rows) != 2 {
				t.Fatalf("rows %v, %v; want 2", rows, err)
			}
			tx, err := c.TransactionByLabel(ctx, emuDB, "tls:1")
			if err != nil {
				t.Fatalf("TransactionByLabel with Config.TLS against a MySQL port without TLS: %v", err)
			}
			if tx.ID != res.TxnID || (tx.Status != doris.TxnVisible && tx.Status != doris.TxnCommitted) {
				t.Fatalf("transaction %+v", tx)
			}
		})
	}
}

// A client that does not trust the CA fails every call with a certificate
// error that IsCertificateError recognises and that is not ambiguous:
// the handshake failed before any request byte was sent, so nothing can
// have been applied (IsAmbiguous's contract, docs/design.md §2).
func TestTLSUnknownCAIsCertificateErrorNotAmbiguous(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "localhost", "127.0.0.1")
	other := doristest.MustCertificates(t, "localhost", "127.0.0.1")
	for _, tc := range []struct {
		name   string
		tls    *tls.Config
		direct bool
	}{
		{"system roots via FE", nil, false},
		{"system roots direct BE", nil, true},
		{"other CA via FE", &tls.Config{RootCAs: other.Pool}, false},
		{"other CA direct BE", &tls.Config{RootCAs: other.Pool}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := newTLSEmulated(t, pki, tc.tls, tc.direct)
			ctx := context.Background()
			_, err := c.StreamLoad(ctx, jsonLoad("tls:2"), strings.NewReader(twoRows))
			checkCertErr(t, "StreamLoad", err)
			checkCertErr(t, "CommitLabel", c.CommitLabel(ctx, emuDB, "tls:2"))
			checkCertErr(t, "AbortTxn", c.AbortTxn(ctx, emuDB, 1))
			_, err = c.LoadState(ctx, emuDB, "tls:2")
			checkCertErr(t, "LoadState", err)
			if st := s.LabelState(emuDB, "tls:2"); st != doris.TxnUnknown {
				t.Fatalf("label state %q: a load began although the handshake failed", st)
			}
		})
	}
}

// The FE's certificate is fine but the BE's does not cover its host name
// (127.0.0.1): the failure comes after the 307, on the BE handshake, and is
// still a certificate error, not ambiguous, and nothing began.
func TestTLSBEHostnameMismatch(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "localhost")
	s, c := newTLSEmulated(t, pki, &tls.Config{RootCAs: pki.Pool}, false)
	_, err := c.StreamLoad(context.Background(), jsonLoad("tls:3"), strings.NewReader(twoRows))
	checkCertErr(t, "StreamLoad", err)
	if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error %q does not name the BE", err)
	}
	if st := s.LabelState(emuDB, "tls:3"); st != doris.TxnUnknown {
		t.Fatalf("label state %q, want none begun", st)
	}
}

func checkCertErr(t *testing.T, op string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error without the CA", op)
	}
	if !doris.IsCertificateError(err) {
		t.Fatalf("%s: IsCertificateError false for %v", op, err)
	}
	if doris.IsAmbiguous(err) {
		t.Fatalf("%s: a failed handshake is classified ambiguous: %v", op, err)
	}
	if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("%s: error %q does not say it is a certificate problem", op, err)
	}
	var le *doris.LoadError
	if errors.As(err, &le) {
		t.Fatalf("%s: a handshake failure is reported as a Doris answer: %v", op, err)
	}
}
