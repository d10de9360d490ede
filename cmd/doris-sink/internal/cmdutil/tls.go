package cmdutil

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// KafkaTLSConfig maps the kafka.tls.* keys to the TLS config of the broker
// connections (loader/kafka Config.TLS, kafka.TLSDialer): the CA bundle
// (system roots without kafka.tls.ca_file), the client certificate of
// mutual TLS (kafka.tls.cert_file + kafka.tls.key_file) and the
// verification name (kafka.tls.server_name). It returns nil when TLS is
// off. A file that cannot be read or parsed, or a certificate and key that
// do not match, is a *config.FileError naming the key.
func KafkaTLSConfig(t config.TLS) (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	tc, err := TLSConfig("kafka.tls.ca_file", t.CAFile)
	if err != nil {
		return nil, err
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := ClientCertificate("kafka.tls.cert_file", t.CertFile, "kafka.tls.key_file", t.KeyFile)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tc.ServerName = t.ServerName
	return tc, nil
}

// ClientCertificate loads a PEM client certificate (chain) from certPath
// and its PEM private key from keyPath; certKey and keyKey are the config
// keys naming them, used in the *config.FileError of a file that cannot be
// read, holds no PEM certificate or key, or a key that does not match the
// certificate (that error names keyKey and certKey).
func ClientCertificate(certKey, certPath, keyKey, keyPath string) (tls.Certificate, error) {
	if certPath == "" || keyPath == "" {
		return tls.Certificate{}, &config.ConflictError{
			Keys:   []string{certKey + "=" + certPath, keyKey + "=" + keyPath},
			Reason: "a client certificate needs both its certificate and its key",
			Fix:    "set both " + certKey + " and " + keyKey + ", or neither",
		}
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, &config.FileError{Key: certKey, Path: certPath, Err: err}
	}
	if !hasPEM(certPEM, "CERTIFICATE") {
		return tls.Certificate{}, &config.FileError{Key: certKey, Path: certPath, Err: fmt.Errorf("no PEM certificate found")}
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, &config.FileError{Key: keyKey, Path: keyPath, Err: err}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, &config.FileError{Key: keyKey, Path: keyPath,
			Err: fmt.Errorf("not the private key of %s %s: %w", certKey, certPath, err)}
	}
	return cert, nil
}

// hasPEM reports whether b holds a PEM block of type typ.
func hasPEM(b []byte, typ string) bool {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return false
		}
		if blk.Type == typ {
			return true
		}
	}
}
