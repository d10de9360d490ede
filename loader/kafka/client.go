package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
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
// kgo.DialTLSConfig does); the Connector uses it for Config.TLS. A failed
// handshake (an unknown CA, a wrong host name) is wrapped with the broker's
// address, which kgo's "unable to dial: <err>" does not name. The error
// chain is kept, so kgo classifies it as before: a certificate error is not
// retried and the Connector fails at start. Use it instead of
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
		hctx, cancel := context.WithTimeout(ctx, brokerDialTimeout)
		defer cancel()
		tconn := tls.Client(conn, c)
		if err := tconn.HandshakeContext(hctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("tls handshake with broker %s: %w", host, err)
		}
		return tconn, nil
	}
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
func (c *Connector) consumerOpts(offsets map[int32]int64) []kgo.Opt {
	assign := make(map[int32]kgo.Offset, len(offsets))
	for p, o := range offsets {
		assign[p] = kgo.NewOffset().At(o)
	}
	opts := c.baseOpts()
	return append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.cfg.Topic: assign}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(c.cfg.FetchMaxBytes),
		kgo.BrokerMaxReadBytes(max(c.cfg.FetchMaxBytes*2, 100<<20)),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
}
