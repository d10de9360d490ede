package kafkaopts

import (
	"context"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

func loadYAML(t *testing.T, body string, env ...string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(config.LoadOptions{File: path, Environ: func() []string { return env }})
}

// listTopics connects with opts and lists the cluster's topics.
func listTopics(t *testing.T, opts []kgo.Opt) ([]string, error) {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.RequestRetries(0))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx)
	return td.Names(), err
}

// kafka.tls.ca_file (implying TLS) and SASL with the password from the
// environment reach kgo: a TLS + SCRAM kfake cluster answers. Without the
// CA (kafka.tls.enabled with the system roots, or another CA) the error
// says certificate and names the broker.
func TestOptsTLSWithCAFile(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	other := doristest.MustCertificates(t, "127.0.0.1")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.TLS(pki.Server),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "sink", "kafka-s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker := kc.ListenAddrs()[0]
	env := config.EnvPrefix + "KAFKA__SASL__PASSWORD=kafka-s3cret"
	base := "kafka: {brokers: [" + broker + "], sasl: {mechanism: scram-sha-256, user: sink}, tls: "

	cfg, err := loadYAML(t, base+"{ca_file: "+pki.MustWriteCA(t, t.TempDir())+"}}\n", env)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Kafka.TLS.Enabled {
		t.Fatal("kafka.tls.ca_file does not imply kafka.tls.enabled")
	}
	opts, err := Opts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := listTopics(t, opts); err != nil || len(names) != 1 || names[0] != "orders" {
		t.Fatalf("list topics over TLS+SASL = %v, %v", names, err)
	}

	for name, tls := range map[string]string{"system roots": "{enabled: true}", "other CA": "{ca_file: " + other.MustWriteCA(t, t.TempDir()) + "}"} {
		cfg, err := loadYAML(t, base+tls+"}\n", env)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := Opts(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = listTopics(t, opts)
		if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), broker) {
			t.Errorf("%s: err %v, want a certificate error naming broker %s", name, err, broker)
		}
	}
}

// An unreadable or non-PEM kafka.tls.ca_file is a config error naming the key.
func TestOptsBadCAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{notPEM, dir} {
		cfg := &config.Config{Kafka: config.Kafka{Brokers: []string{"127.0.0.1:1"}, TLS: config.TLS{Enabled: true, CAFile: path}}}
		if _, err := Opts(cfg); !config.IsConfigError(err) || !strings.Contains(err.Error(), "kafka.tls.ca_file") {
			t.Errorf("Opts with ca_file %s = %v, want a config error naming kafka.tls.ca_file", path, err)
		}
	}
	if _, err := loadYAML(t, "kafka: {tls: {ca_file: "+filepath.Join(dir, "missing.pem")+"}}\n"); !config.IsConfigError(err) ||
		!strings.Contains(err.Error(), "kafka.tls.ca_file") {
		t.Errorf("Load with a missing kafka.tls.ca_file = %v", err)
	}
}
