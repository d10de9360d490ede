package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// kafka.tls.cert_file, key_file and server_name decode (file and env), and
// each implies kafka.tls.enabled.
func TestKafkaMutualTLSKeys(t *testing.T) {
	t.Parallel()
	cert, key := writeFile(t, "c.pem", "x"), writeFile(t, "k.pem", "y")
	c := mustLoad(t, merge(minimal, "kafka: {tls: {cert_file: "+cert+", key_file: "+key+"}}\n"),
		[]string{EnvPrefix + "KAFKA__TLS__SERVER_NAME=kafka.internal"}, nil, NeedRun)
	if tl := c.Kafka.TLS; !tl.Enabled || tl.CertFile != cert || tl.KeyFile != key || tl.ServerName != "kafka.internal" {
		t.Fatalf("kafka.tls = %+v", tl)
	}
	c = mustLoad(t, merge(minimal, "kafka: {tls: {server_name: kafka.internal}}\n"), nil, nil, NeedRun)
	if !c.Kafka.TLS.Enabled {
		t.Fatal("kafka.tls.server_name does not imply kafka.tls.enabled")
	}
}

// A certificate without its key (or the reverse) is a conflict naming both
// keys; a missing file is a file error naming its key.
func TestKafkaMutualTLSErrors(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "c.pem", "x")
	for _, half := range []string{"cert_file", "key_file"} {
		_, err := load(t, merge(minimal, "kafka: {tls: {"+half+": "+file+"}}\n"), nil, nil, NeedRun)
		var ce *ConflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "kafka.tls.cert_file") || !strings.Contains(err.Error(), "kafka.tls.key_file") {
			t.Errorf("only kafka.tls.%s: %v, want a conflict naming both keys", half, err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for key, yaml := range map[string]string{
		"kafka.tls.cert_file": "kafka: {tls: {cert_file: " + missing + ", key_file: " + file + "}}\n",
		"kafka.tls.key_file":  "kafka: {tls: {cert_file: " + file + ", key_file: " + missing + "}}\n",
	} {
		_, err := load(t, merge(minimal, yaml), nil, nil, NeedRun)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Key != key || fe.Path != missing {
			t.Errorf("missing %s: %v, want a file error naming it", key, err)
		}
	}
}
