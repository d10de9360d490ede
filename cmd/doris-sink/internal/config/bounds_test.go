package config

import "testing"

// The bounds of hostile records (issue 25) have their documented defaults,
// take sizes, and refuse values outside their ranges, naming the key.
func TestRecordBoundsKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Records.MaxRowBytes != 100<<20 || c.Records.MaxKeyBytes != 1<<20 || c.Records.MaxHeadersBytes != 1<<20 ||
		c.Kafka.MaxDecompressedBatchBytes != 256<<20 {
		t.Fatalf("defaults: row %d, key %d, headers %d, batch %d", c.Records.MaxRowBytes, c.Records.MaxKeyBytes,
			c.Records.MaxHeadersBytes, c.Kafka.MaxDecompressedBatchBytes)
	}
	c = mustLoad(t, merge(minimal, "records: {max_row_bytes: 8MiB, max_key_bytes: 4KiB, max_headers_bytes: 2KiB}\nkafka: {max_decompressed_batch_bytes: 64MiB}\n"), nil, nil, NeedRun)
	if c.Records.MaxRowBytes != 8<<20 || c.Records.MaxKeyBytes != 4<<10 || c.Records.MaxHeadersBytes != 2<<10 ||
		c.Kafka.MaxDecompressedBatchBytes != 64<<20 {
		t.Fatalf("set: %+v %+v", c.Records, c.Kafka)
	}
	for key, yaml := range map[string]string{
		"records.max_row_bytes":              "records: {max_row_bytes: 100}\n",
		"records.max_key_bytes":              "records: {max_key_bytes: 2GiB}\n",
		"records.max_headers_bytes":          "records: {max_headers_bytes: 1}\n",
		"kafka.max_decompressed_batch_bytes": "kafka: {max_decompressed_batch_bytes: 2GiB}\n",
	} {
		_, err := load(t, merge(minimal, yaml), nil, nil, NeedRun)
		if err == nil {
			t.Errorf("%s: loaded, want a refusal", yaml)
			continue
		}
		keyError(t, err, key)
	}
}
