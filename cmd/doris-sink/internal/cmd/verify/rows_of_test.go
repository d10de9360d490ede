package verify

import (
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Issue 28: verify skipped tombstones only for records.format debezium,
// so an Avro Debezium job (records.envelope debezium) had false gaps, and
// the gap's accounting printed as "()". Tombstones are skipped by what the
// job's config means, for every format and envelope.
func TestSkipsTombstonesByConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		format, envelope string
		want             bool
	}{
		{config.RecordsDebezium, "", true},
		{config.RecordsAvro, config.EnvelopeDebezium, true},
		{config.RecordsProtobuf, config.EnvelopeDebezium, true},
		{config.RecordsJSONSchema, config.EnvelopeDebezium, true},
		{config.RecordsAvro, "", false},
		{config.RecordsJSON, "", false}, // a tombstone is a delete row (records.delete.tombstones) or a dead letter
		{config.RecordsCSV, "", false},
	} {
		cfg := &config.Config{Records: config.Records{Format: c.format, Envelope: c.envelope}}
		if got := skipsTombstones(cfg); got != c.want {
			t.Errorf("format %s envelope %q: skipsTombstones %v, want %v", c.format, c.envelope, got, c.want)
		}
	}
	if s := (&Accounting{}).String(); s == "" || !strings.Contains(s, "every record a row") {
		t.Errorf("empty accounting prints %q", s)
	}
}
