package verify

import (
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// skipsTombstones reports whether the job of cfg loads no row for a
// tombstone (a nil-value record): the connector's own rule
// (kafka.SkipsTombstones), so that verify's Kafka accounting means what
// the job's records.format and records.envelope mean. A Debezium envelope,
// JSON (records.format debezium) or through the registry (avro, protobuf,
// json_schema with records.envelope: debezium), skips it; json with
// records.delete.tombstones (or tables.<t>.delete.tombstones) loads it as
// a delete row; any other record that is no row is dead-lettered, which
// the ledger counts. Deletes (op d, records.delete.field) are rows.
func skipsTombstones(cfg *config.Config) bool {
	return kafka.SkipsTombstones(cfg.Records.Format, cfg.Records.Envelope)
}
