package cmdutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// loadYAML loads a config file with body and env (Need: none).
func loadYAML(t *testing.T, body string, env ...string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(config.LoadOptions{File: path, Environ: func() []string { return env }})
}

// doris.tls.ca_file from YAML reaches the Doris client: Stream Load 2PC over
// https (FE 307 → https BE, docs/doris-facts.md §1.2) and the commit succeed, with
// the password from doris.password_file. Without the CA the same config
// fails with a certificate error.
func TestNewDorisClientWithCAFile(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "localhost", "127.0.0.1")
	s, err := doristest.NewServer(doristest.WithTLS(pki.Server), doristest.SeedDatabases("demo"), doristest.User("loader", "s3cret-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.CreateTable("demo", "CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "doris: {fe: [" + s.FEURL() + "], mysql: " + s.MySQLAddr() + ", user: loader, password_file: " + pw
	for _, tc := range []struct {
		name, yaml string
		ok         bool
	}{
		{"with doris.tls.ca_file", base + ", tls: {ca_file: " + pki.MustWriteCA(t, t.TempDir()) + "}}\n", true},
		{"without", base + "}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadYAML(t, tc.yaml)
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewDorisClient(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			label := "cmdtls:" + map[bool]string{true: "1", false: "2"}[tc.ok]
			res, err := c.StreamLoad(ctx, doris.LoadRequest{DB: "demo", Table: "t", Label: label, Format: "json",
				ReadJSONByLine: true, TwoPhaseCommit: true}, strings.NewReader(`{"id":1}`+"\n"))
			if !tc.ok {
				if !doris.IsCertificateError(err) || doris.IsAmbiguous(err) {
					t.Fatalf("StreamLoad without the CA: %v, want a certificate error, not ambiguous", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("StreamLoad: %v", err)
			}
			if err := c.CommitTxn(ctx, "demo", res.TxnID); err != nil {
				t.Fatalf("CommitTxn: %v", err)
			}
			if st := s.LabelState("demo", label); st != doris.TxnVisible {
				t.Fatalf("label state %q, want VISIBLE", st)
			}
			// MySQL: the emulator's FE MySQL port has no TLS. With
			// doris.tls.ca_file, doris.mysql_tls defaults to required: refused;
			// doris.mysql_tls: preferred falls back to plaintext.
			if _, err := c.TransactionByLabel(ctx, "demo", label); !errors.Is(err, mysql.ErrNoTLS) {
				t.Fatalf("TransactionByLabel with doris.tls.ca_file against MySQL without TLS: %v, want mysql.ErrNoTLS", err)
			}
			cfg.Doris.MySQLTLS = "preferred"
			p, err := NewDorisClient(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.TransactionByLabel(ctx, "demo", label); err != nil {
				t.Fatalf("TransactionByLabel with doris.mysql_tls: preferred: %v", err)
			}
		})
	}
}

// A CA file that is missing, not PEM, or unreadable (a directory) is a
// config error naming the key, from TLSConfig and from NewDorisClient.
func TestTLSConfigBadCAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.pem"), notPEM, dir} {
		_, err := TLSConfig("kafka.tls.ca_file", path)
		var fe *config.FileError
		if !errors.As(err, &fe) || !config.IsConfigError(err) || !strings.Contains(err.Error(), "kafka.tls.ca_file") ||
			!strings.Contains(err.Error(), path) {
			t.Errorf("TLSConfig(%s) = %v, want a config error naming kafka.tls.ca_file and the path", path, err)
		}
		cfg := &config.Config{Doris: config.Doris{FE: []string{"https://127.0.0.1:1"}, User: "root", TLS: config.DorisTLS{CAFile: path}}}
		if _, err := NewDorisClient(cfg, nil); !config.IsConfigError(err) || !strings.Contains(err.Error(), "doris.tls.ca_file") {
			t.Errorf("NewDorisClient with ca_file %s = %v, want a config error naming doris.tls.ca_file", path, err)
		}
	}
	// Through Load, a missing file is refused at validation, naming the key.
	_, err := loadYAML(t, "doris: {tls: {ca_file: "+filepath.Join(dir, "missing.pem")+"}}\n")
	if !config.IsConfigError(err) || !strings.Contains(err.Error(), "doris.tls.ca_file") {
		t.Errorf("Load with a missing doris.tls.ca_file = %v", err)
	}
	// An empty path means the system roots.
	if tc, err := TLSConfig("kafka.tls.ca_file", ""); err != nil || tc.RootCAs != nil {
		t.Errorf("TLSConfig(\"\") = %+v, %v; want system roots", tc, err)
	}
}
