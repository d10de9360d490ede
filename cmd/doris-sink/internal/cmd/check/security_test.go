package check

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// check prints a WARN line per plaintext path credentials take
// (cmdutil.SecurityWarnings): here MySQL without TLS and an http FE off
// loopback.
func TestCheckWarnsAboutPlaintextCredentials(t *testing.T) {
	t.Parallel()
	_, client := cmdutil.NewTestDoris(t, "CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	f, _, _ := cmdutil.NewTestFactory(false)
	f.NewDoris = func(*config.Config, *slog.Logger) (*doris.Client, error) { return client, nil }
	cfg := &config.Config{Doris: config.Doris{FE: []string{"http://fe.lan:8030"}, MySQL: "fe.lan:9030", User: "root",
		Database: "demo", Table: "t"}, Delivery: config.Delivery{Guarantee: config.ExactlyOnce}}
	r := &Report{}
	checkDoris(context.Background(), r, f, cfg)
	var sec []string
	for _, l := range r.Lines {
		if l.Check == "security" && l.Status == Warn {
			sec = append(sec, l.Detail)
		}
	}
	if len(sec) != 2 || !strings.Contains(sec[0], "is plaintext") || !strings.Contains(sec[1], "plain http") {
		t.Fatalf("security lines %q; all lines %+v", sec, r.Lines)
	}
}
