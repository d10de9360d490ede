package kafkaopts

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/doris/doristest"
)

// kafka.tls.cert_file + key_file reach kgo: a kfake broker that requires a
// client certificate signed by its CA answers. Without them the error
// names the broker and the missing client certificate.
func TestOptsMutualTLS(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.TLS(pki.MutualServer()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker := kc.ListenAddrs()[0]
	dir := t.TempDir()
	ca := pki.MustWriteCA(t, dir)
	cert, key, err := pki.MustClientCert(t, "doris-sink").Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := "kafka: {brokers: [" + broker + "], tls: {ca_file: " + ca

	cfg, err := loadYAML(t, base+", cert_file: "+cert+", key_file: "+key+"}}\n")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := Opts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := listTopics(t, opts); err != nil || len(names) != 1 || names[0] != "orders" {
		t.Fatalf("list topics over mutual TLS = %v, %v", names, err)
	}

	cfg, err = loadYAML(t, base+"}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if opts, err = Opts(cfg); err != nil {
		t.Fatal(err)
	}
	_, err = listTopics(t, opts)
	if err == nil || !strings.Contains(err.Error(), broker) || !strings.Contains(err.Error(), "client certificate") {
		t.Fatalf("without a client certificate: %v; want an error naming broker %s and the client certificate", err, broker)
	}
}

// kafka.tls.server_name verifies the broker against that name: a broker
// reached at 127.0.0.1 whose certificate only lists kafka.internal is
// trusted with it and refused without it.
func TestOptsServerName(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "kafka.internal")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"), kfake.TLS(pki.Server))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	broker := kc.ListenAddrs()[0]
	base := "kafka: {brokers: [" + broker + "], tls: {ca_file: " + pki.MustWriteCA(t, t.TempDir())

	cfg, err := loadYAML(t, base+", server_name: kafka.internal}}\n")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := Opts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := listTopics(t, opts); err != nil || len(names) != 1 {
		t.Fatalf("list topics with server_name = %v, %v", names, err)
	}

	cfg, err = loadYAML(t, base+"}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if opts, err = Opts(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := listTopics(t, opts); err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), broker) {
		t.Fatalf("without server_name: %v; want a certificate error naming broker %s", err, broker)
	}
}
