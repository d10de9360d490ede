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
// earliest (partitions and topics added since at their earliest offset),
// or resolves Config.Start and persists it before returning. A persisted
// position naming a topic no longer selected is refused.
func (c *Connector) persistedFirstStart(ctx context.Context, earliest topicOffsets) (topicOffsets, error) {
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
		if err := c.checkPositionTopics(pos); err != nil {
			return nil, fmt.Errorf("the persisted first-start position: %w", err)
		}
		if ok {
			base := earliest.clone()
			for t, offs := range pos.PerTopic() {
				if _, listed := base[t]; !listed {
					continue // a topic matched by kafka.topic_regex then and gone now
				}
				for p, o := range offs {
					if c.owns(t, p) {
						base.set(t, p, o)
					}
				}
			}
			c.o.logger.Info("first start (persisted before, not resolved again)", "mode", c.cfg.Start,
				"position", base.position().String())
			return base, nil
		}
	}
	base, err := c.firstStart(ctx, earliest)
	if err != nil {
		return nil, err
	}
	b, err := base.position().MarshalJSON()
	if err != nil {
		return nil, err
	}
	if err := s.SaveFirstStart(ctx, b); err != nil {
		return nil, err
	}
	return base, nil
}
