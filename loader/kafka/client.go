package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// baseOpts are the kgo options shared by the admin and the consuming
// clients: brokers, client id, TLS, SASL, then the caller's extra options.
func (c *Connector) baseOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.cfg.Brokers...),
		kgo.ClientID(c.cfg.ClientID),
	}
	if c.cfg.TLS != nil {
		opts = append(opts, kgo.Dialer(TLSDialer(c.cfg.TLS)))
	}
	if m := saslMechanism(c.cfg.SASL); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return append(opts, c.o.kgoOpts...)
}

// brokerDialTimeout bounds the TCP dial and the TLS handshake of one broker
// connection (kgo's default dial timeout).
const brokerDialTimeout = 10 * time.Second

// TLSDialer returns a kgo.Dialer function that connects to a broker over
// TLS with a copy of tc (ServerName defaulting to the broker's host, as
// kgo.DialTLSConfig does; tc.Certificates is the client certificate of
// mutual TLS); the Connector uses it for Config.TLS. A failed handshake (an
// unknown CA, a wrong host name) and a TLS alert from the broker later on
// (TLS 1.3 brokers refuse a missing or unknown client certificate after
// the client's handshake ends) are wrapped with the broker's address,
// which kgo's "unable to dial: <err>" does not name; when the broker asked
// for a client certificate and tc has none, the error says so. The error
// chain is kept, so kgo classifies it as before: a certificate error is
// not retried and the Connector fails at start. Use it instead of
// kgo.DialTLSConfig, not with it (kgo refuses both).
func TLSDialer(tc *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	nd := &net.Dialer{Timeout: brokerDialTimeout}
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		conn, err := nd.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c := tc.Clone()
		if c.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				c.ServerName = h
			}
		}
		tconn := &brokerConn{host: host}
		if len(c.Certificates) == 0 && c.GetClientCertificate == nil {
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				tconn.askedNoCert = true
				return &tls.Certificate{}, nil // send none, as without the hook
			}
		}
		hctx, cancel := context.WithTimeout(ctx, brokerDialTimeout)
		defer cancel()
		tconn.Conn = tls.Client(conn, c)
		if err := tconn.HandshakeContext(hctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("tls handshake with broker %s: %s%w", host, tconn.hint(), err)
		}
		return tconn, nil
	}
}

// brokerConn is a TLS connection to a broker whose TLS alerts name it.
type brokerConn struct {
	*tls.Conn
	host string
	// askedNoCert: the broker asked for a client certificate and none was
	// sent. Set during the handshake, read after it.
	askedNoCert bool
}

// hint explains a refused handshake when no client certificate was sent.
func (c *brokerConn) hint() string {
	if !c.askedNoCert {
		return ""
	}
	return "the broker asked for a client certificate and none is configured " +
		"(mutual TLS: kafka.tls.cert_file and kafka.tls.key_file): "
}

// Read wraps a TLS alert from the broker (and, when the broker asked for a
// client certificate that was not sent, any error but EOF) with the
// broker.
func (c *brokerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	return n, c.wrap(err)
}

// Write wraps errors like Read.
func (c *brokerConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	return n, c.wrap(err)
}

// wrap keeps io.EOF and io.ErrUnexpectedEOF as they are: kgo compares
// them by identity (a first-read EOF is not retried forever).
func (c *brokerConn) wrap(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return err
	}
	var op *net.OpError
	if c.askedNoCert || errors.As(err, &op) && op.Op == "remote error" {
		return fmt.Errorf("tls with broker %s: %s%w", c.host, c.hint(), err)
	}
	return err
}

// saslMechanism maps SASL to a franz-go mechanism, nil for none.
func saslMechanism(s SASL) sasl.Mechanism {
	switch strings.ToUpper(s.Mechanism) {
	case SASLPlain:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()
	case SASLScramSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()
	case SASLScramSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()
	}
	return nil
}

// consumerOpts are the options of a consuming client that starts at
// offsets: direct partition assignment (no group membership), bounded
// fetches, and an out-of-range offset is fatal (NoResetOffset), since
// skipping or re-reading records silently would break exactly-once.
//
// One partition may fill a whole fetch response (FetchMaxPartitionBytes =
// FetchMaxBytes; kgo's default is 1 MiB): a partition read at its full
// speed then costs one fetch per FetchMaxBytes, not per MiB. The fetch
// round trips per byte are most of what the consumer costs beyond
// decoding; at steady state this cut the sink's CPU per byte by a third
// on 1 KiB JSON from one partition (docs/performance.md, "Steady state of the record path").
// Memory is still bounded by FetchMaxBytes per buffered fetch.
func (c *Connector) consumerOpts(offsets topicOffsets) []kgo.Opt {
	assign := make(map[string]map[int32]kgo.Offset, len(offsets))
	for t, offs := range offsets {
		assign[t] = make(map[int32]kgo.Offset, len(offs))
		for p, o := range offs {
			assign[t][p] = kgo.NewOffset().At(o)
		}
	}
	opts := c.baseOpts()
	return append(opts,
		kgo.ConsumePartitions(assign),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(c.cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(c.cfg.FetchMaxBytes),
		kgo.BrokerMaxReadBytes(max(c.cfg.FetchMaxBytes*2, 100<<20)),
		kgo.MaxDecompressBatchBytes(c.cfg.MaxDecompressedBatchBytes),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
}
