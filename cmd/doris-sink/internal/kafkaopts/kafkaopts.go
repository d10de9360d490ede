// Package kafkaopts maps the kafka.* config keys to franz-go client
// options (brokers, TLS, SASL). The connector and `check` share it.
package kafkaopts

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// Opts returns the connection options for cfg.Kafka: seed brokers, TLS
// (cmdutil.KafkaTLSConfig: CA, mutual TLS client certificate, server name)
// and SASL. Consumer options (group, start) are the connector's.
func Opts(cfg *config.Config) ([]kgo.Opt, error) {
	k := cfg.Kafka
	opts := []kgo.Opt{kgo.SeedBrokers(k.Brokers...)}
	t, err := cmdutil.KafkaTLSConfig(k.TLS)
	if err != nil {
		return nil, err
	}
	if t != nil {
		opts = append(opts, kgo.Dialer(kafka.TLSDialer(t)))
	}
	switch pw := k.SASL.Password.Reveal(); k.SASL.Mechanism {
	case "":
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: k.SASL.User, Pass: pw}.AsMechanism()))
	case "scram-sha-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: k.SASL.User, Pass: pw}.AsSha256Mechanism()))
	case "scram-sha-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: k.SASL.User, Pass: pw}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("kafka.sasl.mechanism %q: unsupported", k.SASL.Mechanism)
	}
	return opts, nil
}
