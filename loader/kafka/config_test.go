package kafka

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Brokers = nil }, "kafka.brokers"},
		{func(c *Config) { c.Topic = "" }, "kafka.topic"},
		{func(c *Config) { c.Start = StartCommitted; c.Group = "" }, "committed needs kafka.group"},
		{func(c *Config) { c.Start = StartOffsets }, "needs kafka.start_offsets"},
		{func(c *Config) { c.StartOffsets = map[int32]int64{0: 1} }, "only used with kafka.start: offsets"},
		{func(c *Config) { c.Start = "newest" }, "kafka.start"},
		{func(c *Config) { c.DeadLetterTopic = c.Topic }, "dead_letter_topic"},
		{func(c *Config) { c.SASL = SASL{Mechanism: "GSSAPI", User: "u"} }, "sasl.mechanism"},
		{func(c *Config) { c.SASL = SASL{Mechanism: SASLPlain} }, "sasl.user"},
		{func(c *Config) { c.Format = "avro" }, "kafka.format"},
		{func(c *Config) { c.Format = FormatCSV; c.Metadata.Offset = "o" }, "metadata_columns"},
	} {
		cfg := Config{Brokers: []string{"127.0.0.1:1"}, Topic: "t"}
		tc.mut(&cfg)
		_, err := New(cfg, nopSink{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one naming %q", cfg, err, tc.want)
		}
	}
}

func TestPositionRoundTrip(t *testing.T) {
	t.Parallel()
	p := Position{Topic: "or\"ders", Offsets: map[int32]int64{10: 5, 2: 7, 0: 0}}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"topic":"or\"ders","offsets":{"0":0,"2":7,"10":5}}`; string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	back, ok, err := ParsePosition(b)
	if err != nil || !ok || back.String() != string(b) {
		t.Fatalf("parsed %v %v %v", back, ok, err)
	}
	if _, ok, err := ParsePosition(nil); ok || err != nil {
		t.Fatalf("nil position: ok %v err %v", ok, err)
	}
	for _, bad := range []string{`{"topic":"t","offsets":{"x":1}}`, `{"topic":"t","offsets":{"1":-1}}`, `[]`} {
		if _, _, err := ParsePosition([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

// TestSASL: the SASL options reach kgo: a kfake cluster requiring SASL
// accepts the right credentials for each mechanism.
func TestSASL(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{SASLPlain, SASLScramSHA256, SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser(mech, "admin", "pw"),
				kfake.SeedTopics(2, "t"))
			if err != nil {
				t.Fatal(err)
			}
			defer kc.Close()
			c, err := New(Config{Brokers: kc.ListenAddrs(), Topic: "t", SASL: SASL{Mechanism: mech, User: "admin", Password: "pw"}},
				nopSink{}, WithKgoOpts(kgo.RequestRetries(0)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.adminCl.Close()
			listed, err := c.listStart(ctxFor(t), []string{"t"})
			parts := listed["t"]
			if err != nil || len(parts) != 2 {
				t.Fatalf("list partitions with %s: %v %v", mech, parts, err)
			}
		})
	}
}

type nopSink struct{}

func (nopSink) Recover(context.Context) (json.RawMessage, error) { return nil, nil }
func (nopSink) Write(context.Context, []byte) error              { return nil }
func (nopSink) SetStart(json.RawMessage) error                   { return nil }
func (nopSink) Healing() (uint64, json.RawMessage, bool)         { return 0, nil, false }
func (nopSink) CheckpointWith(context.Context, json.RawMessage, loader.CheckpointInfo) error {
	return nil
}
func (nopSink) LastDecision() (uint64, string, bool) { return 0, "", false }
func (nopSink) CommitFailed() <-chan struct{}        { return nil }
func (nopSink) Close(context.Context) error          { return nil }
