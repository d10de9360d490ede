package avrorow

import (
	"testing"
	"time"
)

// TestDebeziumSemanticTypes: Debezium's temporal types (connect.name on
// plain int/long/string, the adaptive time.precision.mode default) and
// VariableScaleDecimal render as Doris DATE/DATETIME/TIME/DECIMAL text;
// ZonedTimestamp moves to records.time_zone, the others are wall clocks.
func TestDebeziumSemanticTypes(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"d","type":{"type":"int","connect.name":"io.debezium.time.Date"}},
		{"name":"t","type":{"type":"int","connect.name":"io.debezium.time.Time"}},
		{"name":"mt","type":{"type":"long","connect.name":"io.debezium.time.MicroTime"}},
		{"name":"nt","type":{"type":"long","connect.name":"io.debezium.time.NanoTime"}},
		{"name":"ts","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.Timestamp"}},
		{"name":"mts","type":{"type":"long","connect.name":"io.debezium.time.MicroTimestamp"}},
		{"name":"nts","type":{"type":"long","connect.name":"io.debezium.time.NanoTimestamp"}},
		{"name":"zts","type":["null",{"type":"string","connect.name":"io.debezium.time.ZonedTimestamp"}]},
		{"name":"vsd","type":{"type":"record","name":"VariableScaleDecimal","namespace":"io.debezium.data","fields":[{"name":"scale","type":"int"},{"name":"value","type":"bytes"}],"connect.name":"io.debezium.data.VariableScaleDecimal"}},
		{"name":"plain","type":{"type":"long","connect.name":"com.example.Other"}}`)
	at := time.Date(2024, 2, 29, 23, 59, 58, 123456789, time.UTC)
	mid := 13*time.Hour + 5*time.Minute + 7*time.Second + 891011*time.Microsecond
	v := map[string]any{
		"d": int32(at.Unix() / 86400), "t": int32(mid / time.Millisecond), "mt": int64(mid / time.Microsecond), "nt": int64(mid),
		"ts": at.UnixMilli(), "mts": at.UnixMicro(), "nts": at.UnixNano(), "zts": map[string]any{"string": "2024-02-29T23:59:58.5Z"},
		"vsd": map[string]any{"scale": int32(2), "value": []byte{0x30, 0x39}}, "plain": int64(7),
	}
	p := encode(t, schema, v)
	got := decode(t, schema, p, Options{TimeZone: time.FixedZone("+08", 8*3600)})
	want := `{"d":"2024-02-29","t":"13:05:07.891","mt":"13:05:07.891011","nt":"13:05:07.891011",` +
		`"ts":"2024-02-29 23:59:58.123000","mts":"2024-02-29 23:59:58.123456","nts":"2024-02-29 23:59:58.123456",` +
		`"zts":"2024-03-01 07:59:58.500000","vsd":"123.45","plain":7}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
