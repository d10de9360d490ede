package cmdutil

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// Factory is what commands get from main: streams, the environment and
// constructors for clients, all replaceable in tests.
type Factory struct {
	IO *IOStreams
	// Environ returns the environment (os.Environ in main); nil reads none.
	Environ func() []string
	// Version is the build version.
	Version string
	// Now is the clock (time.Now in main).
	Now func() time.Time
	// NewDoris builds a Doris client from a loaded config and the logger
	// it logs to; nil means NewDorisClient.
	NewDoris func(*config.Config, *slog.Logger) (*doris.Client, error)
}

// Doris returns a Doris client for cfg whose warnings (a refused or
// downgraded redirect, MySQL in plaintext) go to IO.ErrOut, redacted.
// Commands with a configured logger (run) use DorisWithLogger.
func (f *Factory) Doris(cfg *config.Config) (*doris.Client, error) {
	var log *slog.Logger
	if f.IO != nil && f.IO.ErrOut != nil {
		log = slog.New(doris.RedactingHandler(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	return f.DorisWithLogger(cfg, log)
}

// DorisWithLogger returns a Doris client for cfg logging to log (nil:
// discard).
func (f *Factory) DorisWithLogger(cfg *config.Config, log *slog.Logger) (*doris.Client, error) {
	if f.NewDoris != nil {
		return f.NewDoris(cfg, log)
	}
	return NewDorisClient(cfg, log)
}

// NewDorisClient maps the doris.* keys to a doris.Config; the client logs
// to log (nil: discard).
func NewDorisClient(cfg *config.Config, log *slog.Logger) (*doris.Client, error) {
	dc := doris.Config{
		FE:       cfg.Doris.FE,
		BE:       cfg.Doris.BE,
		MySQL:    cfg.Doris.MySQL,
		User:     cfg.Doris.User,
		Password: cfg.Doris.Password.Reveal(),
		Logger:   log,

		MySQLTLS:               doris.MySQLTLSMode(cfg.Doris.MySQLTLS),
		MySQLAllowInsecureAuth: cfg.Doris.MySQLAllowInsecureAuth,
		RedirectAllowHosts:     cfg.Doris.RedirectAllowHosts,
		RedirectAllowHTTP:      cfg.Doris.RedirectAllowHTTP,
		BESpread:               doris.BESpread(cfg.Doris.BESpread),
	}
	if cfg.Doris.TLS.CAFile != "" {
		t, err := TLSConfig("doris.tls.ca_file", cfg.Doris.TLS.CAFile)
		if err != nil {
			return nil, err
		}
		dc.TLS = t
	}
	c, err := doris.NewClient(dc)
	if err != nil {
		return nil, fmt.Errorf("doris client: %w", err)
	}
	return c, nil
}

// TLSConfig returns a TLS config trusting the PEM CA bundle in path (the
// system roots when path is empty).
func TLSConfig(key, path string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if path == "" {
		return t, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &config.FileError{Key: key, Path: path, Err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, &config.FileError{Key: key, Path: path, Err: fmt.Errorf("no PEM certificate found")}
	}
	t.RootCAs = pool
	return t, nil
}
