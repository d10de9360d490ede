// Package kafka is the Kafka source of doris-sink (docs/design.md §1, connector
// row): a franz-go consumer that reads its source topics (Config.Topic, Topics
// or TopicRegex), converts every record to one Stream Load row
// (docs/design.md §5) and drives a *loader.Loader, whose exactly-once
// protocol (docs/design.md §2) decides which offsets are loaded.
//
// # Standalone use
//
// A Connector never joins a consumer group itself: it assigns every
// partition of its topics to itself (kgo.ConsumePartitions) at the offsets
// the loader's Recover returns, so the checkpoint store, not Kafka, is the
// source of truth for positions. Partitions added to a topic later are
// found by a periodic metadata check and read from their earliest offset.
// After each checkpoint the decided offsets are also committed to the
// consumer group (Config.Group) with metadata naming the checkpoint, for
// monitoring (consumer-lag tools) only; they are read back only on a first
// start with Start = StartCommitted. With a coordlog.Store the offsets are
// committed in the decision's Kafka transaction instead.
//
// # Group use
//
// To share a job's source partitions among several processes, run each as
// a member of the job's consumer group with package loader/kafka/group:
// the group assigns writer slots to members, and for each slot a member
// owns it builds one Connector restricted to the slot's partitions
// (WithPartitionFilter with coordlog.SlotOf) over a coordlog store of the
// slot's scope whose decisions the member stamps with its group generation.
// The Connector stays unaware of the group: the member drains it (Drain)
// when its slot is revoked and cancels it when the slot is lost. `doris-sink
// run` is such a member; examples/groupmember is a Go service that is one.
//
// # Position
//
// The source position handed to loader.Checkpoint (and recorded by the
// store as a checkpoint's start/end) is the JSON document
//
//	{"topic":"orders","offsets":{"0":123,"1":456}}
//
// where each offset is the next offset to read in that partition (Kafka's
// committed-offset convention). Partitions are listed in ascending order.
// A partition missing from a position is read from its earliest offset.
// See Position and ParsePosition.
//
// # Rows
//
// Format "json": each value is one JSON object, re-emitted compactly as one
// JSON line. "csv": each value is one CSV line, passed through. "debezium":
// each value is a Debezium change envelope (optionally inside a "payload"
// wrapper); op c/u/r load the "after" image with __DORIS_DELETE_SIGN__ 0,
// op d loads the "before" image with __DORIS_DELETE_SIGN__ 1, so the
// loader's properties must include hidden_columns: __DORIS_DELETE_SIGN__
// (see RequiredProperties). With Config.Delete, "json" records delete
// without Debezium: a configured field/value, or a tombstone with a JSON key,
// loads the row with __DORIS_DELETE_SIGN__ 1, every other row with 0 (see
// DeleteConfig and DeleteProperties). Optional metadata columns (topic, partition,
// offset, timestamp) are added to JSON rows. A record that cannot be
// converted fails the run with a *RecordError, or goes to the dead-letter
// topic when one is configured.
//
// "avro", "protobuf", "json_schema": each value is in the Confluent wire
// format and decoded into one JSON row through a Schema Registry
// (Config.Schemas, a *registry.Client; the decoders live in
// loader/kafka/avrorow and its siblings); with Config.Envelope
// EnvelopeDebezium the decoded value is a Debezium change event, loaded as
// "debezium" loads JSON ones (EnvelopeProperties). A record whose schema
// the registry cannot give within its retry bound
// (registry.ErrUnavailable) fails the run at its offset even with a
// dead-letter topic: the record may be fine.
//
// # Dead letters
//
// With Config.DeadLetterTopic, records that cannot be converted, rows the
// pre-check against the table finds Doris would refuse (WithRowCheck) and
// rows only Doris refuses (found by bisecting a refused checkpoint) are
// dead-lettered with headers naming the reason, the column and the source
// topic/partition/offset; the topic is checked before anything is read
// (*DeadLetterTopicError), and a dead letter larger than its
// max.message.bytes is truncated. With a DeadLetterStager
// (WithDeadLetterStager: coordlog.Store, job.coordinator kafka) a
// checkpoint's dead letters are produced in the Kafka transaction of its
// decision, exactly once; Config.DeadLetterAtLeastOnce produces each as it
// is read instead. New refuses a dead-letter topic with neither.
//
// # Stopping
//
// Run returns when its context is cancelled (abort: the open checkpoint is
// not decided, the loader's open transaction is aborted, and a restart
// resumes from the last decided position) or after Drain (the records
// consumed so far are checkpointed, then the loader is closed; Run returns
// nil). A failed drain checkpoint is retried, re-reading only up to the
// offsets consumed when Drain was called, within WithDrainTimeout; then
// Run returns a *DrainError.
package kafka
