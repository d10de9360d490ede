package kafka

import (
	"strings"

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
		opts = append(opts, kgo.DialTLSConfig(c.cfg.TLS.Clone()))
	}
	if m := saslMechanism(c.cfg.SASL); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return append(opts, c.o.kgoOpts...)
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
