package kafka

import (
	"context"
	"crypto/tls"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// newTLSEnv is newEnv with a kfake cluster that only speaks TLS, with a
// certificate for 127.0.0.1 signed by pki's CA; e.adm trusts that CA.
func newTLSEnv(t *testing.T, pki *doristest.Certificates, partitions int32) *env {
	t.Helper()
	return newTLSEnvWith(t, pki.Server, &tls.Config{RootCAs: pki.Pool}, partitions)
}

// newTLSEnvWith is newTLSEnv with the broker's TLS config server and the
// config client of e.adm.
func newTLSEnvWith(t *testing.T, server, admin *tls.Config, partitions int32) *env {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, testTopic), kfake.TLS(server))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	acl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DialTLSConfig(admin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(acl.Close)
	srv, err := doristest.NewServer(doristest.SeedDatabases(testDB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateTable(testDB, ordersDDL); err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root",
		MaxRetries: -1, RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &env{t: t, kc: kc, adm: kadm.NewClient(acl), srv: srv, client: client, dir: t.TempDir(), table: "orders",
		format: FormatJSON}
}

// produceTLS writes ids [from, to) like produceIDs, over TLS.
func (e *env) produceTLS(pool *tls.Config, from, to int, partitions int32) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DialTLSConfig(pool),
		kgo.DefaultProduceTopic(testTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: []byte(`{"id":` + itoa(i) + `,"v":"v"}`)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// Config.TLS with the CA of a TLS-only broker: the connector consumes end to
// end, every row exactly once.
func TestTLSEndToEnd(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	e := newTLSEnv(t, pki, 3)
	trust := &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS12}
	e.produceTLS(trust, 0, 40, 3)
	cfg := e.config()
	cfg.TLS = trust
	if err := e.runToEnd(ctxFor(t), e.connector(cfg, nil)); err != nil {
		t.Fatalf("Run over TLS: %v", err)
	}
	e.checkExactlyOnce(40)
}

// A CA that did not sign the broker's certificate: Run fails at start,
// before any record is read, with an error that says it is a certificate
// problem and names the broker.
func TestTLSWrongCAFailsFast(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	other := doristest.MustCertificates(t, "127.0.0.1")
	e := newTLSEnv(t, pki, 1)
	cfg := e.config()
	cfg.TLS = &tls.Config{RootCAs: other.Pool}
	c, err := New(cfg, nopSink{}, WithKgoOpts(kgo.RequestRetries(1)))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Run(ctxFor(t))
	if err == nil {
		t.Fatal("Run with a wrong CA succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "certificate") || !strings.Contains(msg, e.kc.ListenAddrs()[0]) {
		t.Fatalf("error %q: want one saying certificate and naming broker %s", msg, e.kc.ListenAddrs()[0])
	}
}

// newMTLSEnv is newTLSEnv with a broker that requires a client certificate
// signed by pki's CA; cc is the one e.adm presents.
func newMTLSEnv(t *testing.T, pki *doristest.Certificates, cc *doristest.ClientCert, partitions int32) *env {
	t.Helper()
	return newTLSEnvWith(t, pki.MutualServer(), &tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{cc.TLS}}, partitions)
}

// Config.TLS with a client certificate (mutual TLS): the connector
// consumes end to end from a broker that requires one. Without the
// certificate Run fails at start with an error naming the broker and the
// missing client certificate.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	pki := doristest.MustCertificates(t, "127.0.0.1")
	cc := pki.MustClientCert(t, "doris-sink")
	e := newMTLSEnv(t, pki, cc, 2)
	mutual := &tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{cc.TLS}}
	e.produceTLS(mutual, 0, 20, 2)
	cfg := e.config()
	cfg.TLS = mutual
	if err := e.runToEnd(ctxFor(t), e.connector(cfg, nil)); err != nil {
		t.Fatalf("Run over mutual TLS: %v", err)
	}
	e.checkExactlyOnce(20)

	cfg.TLS = &tls.Config{RootCAs: pki.Pool}
	c, err := New(cfg, nopSink{}) // default retries: the refusal is not retried
	if err != nil {
		t.Fatal(err)
	}
	err = c.Run(ctxFor(t))
	broker := e.kc.ListenAddrs()[0]
	if err == nil || !strings.Contains(err.Error(), broker) || !strings.Contains(err.Error(), "client certificate") {
		t.Fatalf("Run without a client certificate: %v; want an error naming broker %s and the client certificate", err, broker)
	}
}
