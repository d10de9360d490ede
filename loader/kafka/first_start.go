package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// StartStore persists the resolved first-start position of a job that has
// not decided anything yet, so that a crash before the first decision does
// not resolve kafka.start again (with latest, a second resolution skips the
// records produced in between). The Kafka coordinator store
// (loader/kafka/coordlog.Store) implements it.
type StartStore interface {
	// FirstStart returns the persisted first-start position (a Position's
	// JSON), ok false if none was persisted.
	FirstStart(ctx context.Context) (raw []byte, ok bool, err error)
	// SaveFirstStart durably persists raw; it returns after it is durable.
	SaveFirstStart(ctx context.Context, raw []byte) error
}

// WithStartStore persists the first-start position in s before the first
// record is read, and reuses the persisted one on a later first start (no
// decision yet). It also turns off the Connector's own monitoring commit
// to Config.Group: a StartStore that is a coordinator log commits the
// group offsets in its own transaction.
func WithStartStore(s StartStore) Opt {
	return optFunc(func(o *options) { o.startStore = s })
}

// ClientOpts returns the kgo options that reach cfg's cluster: seed
// brokers, client id (default "doris-sink"), TLS (TLSDialer) and SASL, as
// the Connector's own clients use them. The coordinator log opens its
// clients with them.
func ClientOpts(cfg Config) []kgo.Opt {
	id := cfg.ClientID
	if id == "" {
		id = "doris-sink"
	}
	opts := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.ClientID(id)}
	if cfg.TLS != nil {
		opts = append(opts, kgo.Dialer(TLSDialer(cfg.TLS.Clone())))
	}
	if m := saslMechanism(cfg.SASL); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

// persistedFirstStart returns the persisted first start overlaid on
// earliest (partitions added since start at their earliest offset), or
// resolves Config.Start and persists it before returning.
func (c *Connector) persistedFirstStart(ctx context.Context, earliest map[int32]int64) (map[int32]int64, error) {
	s := c.o.startStore
	raw, ok, err := s.FirstStart(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		pos, ok, err := ParsePosition(raw)
		if err != nil {
			return nil, err
		}
		if ok && pos.Topic != c.cfg.Topic {
			return nil, fmt.Errorf("the persisted first-start position is for topic %q, kafka.topic is %q", pos.Topic, c.cfg.Topic)
		}
		if ok {
			base := make(map[int32]int64, len(earliest))
			for p, o := range earliest {
				base[p] = o
			}
			for p, o := range pos.Offsets {
				base[p] = o
			}
			c.o.logger.Info("first start (persisted before, not resolved again)", "mode", c.cfg.Start,
				"position", Position{Topic: c.cfg.Topic, Offsets: base}.String())
			return base, nil
		}
	}
	base, err := c.firstStart(ctx, earliest)
	if err != nil {
		return nil, err
	}
	b, err := Position{Topic: c.cfg.Topic, Offsets: base}.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if err := s.SaveFirstStart(ctx, b); err != nil {
		return nil, err
	}
	return base, nil
}
