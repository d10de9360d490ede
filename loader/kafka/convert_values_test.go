package kafka

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

func TestValueConversions(t *testing.T) {
	t.Parallel()
	dec := map[string]string{cdcschema.ParamScale: "2", cdcschema.ParamPrecision: "10"}
	fields := []cdcschema.Field{
		{Name: "id", Type: "int64"},
		{Name: "d", Type: "int32", Semantic: cdcschema.DebeziumDate},
		{Name: "ts", Type: "int64", Semantic: cdcschema.DebeziumTimestamp},
		{Name: "us", Type: "int64", Semantic: cdcschema.DebeziumMicroTimestamp},
		{Name: "ns", Type: "int64", Semantic: cdcschema.DebeziumNanoTimestamp},
		{Name: "z", Type: "string", Semantic: cdcschema.DebeziumZonedTimestamp},
		{Name: "amt", Type: "bytes", Semantic: cdcschema.ConnectDecimal, Parameters: dec},
		{Name: "neg", Type: "bytes", Semantic: cdcschema.ConnectDecimal, Parameters: dec},
		{Name: "vs", Type: "struct", Semantic: cdcschema.DebeziumVarScaleDec},
		{Name: "tm", Type: "int64", Semantic: cdcschema.DebeziumMicroTime},
		{Name: "raw", Type: "int32", Semantic: cdcschema.DebeziumDate}, // a BIGINT column keeps the days
		{Name: "nul", Type: "int32", Semantic: cdcschema.DebeziumDate},
	}
	cols := []schema.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DATE"}, {Name: "ts", Type: "DATETIME(3)"},
		{Name: "us", Type: "DATETIME(6)"}, {Name: "ns", Type: "DATETIMEV2(6)"}, {Name: "z", Type: "DATETIME(6)"},
		{Name: "amt", Type: "DECIMAL(10,2)"}, {Name: "neg", Type: "DECIMAL(10,2)"}, {Name: "vs", Type: "DOUBLE"},
		{Name: "tm", Type: "STRING"}, {Name: "raw", Type: "BIGINT"}, {Name: "nul", Type: "DATE"}}
	conv, err := NewConverter(ConvertConfig{Format: FormatDebezium})
	if err != nil {
		t.Fatal(err)
	}
	conv.SetValueConversions(fields, cols)
	// 12345 = 0x3039 → "MDk="; -12345 = 0xCFC7 → "z8c="; 1.5 as scale 1, value 15 = 0x0F → "Dw==".
	after := `{"id":1,"d":16816,"ts":1529476623004,"us":1529476623000005,"ns":1529476623000005999,` +
		`"z":"2018-06-20T08:37:03.5+02:00","amt":"MDk=","neg":"z8c=","vs":{"scale":1,"value":"Dw=="},"tm":3723000001,"raw":16816,"nul":null}`
	row, err := conv.Convert(dbzRecordRaw(after))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":1,"d":"2016-01-16","ts":"2018-06-20 06:37:03.004","us":"2018-06-20 06:37:03.000005","ns":"2018-06-20 06:37:03.000005",` +
		`"z":"2018-06-20 06:37:03.500000","amt":"123.45","neg":"-123.45","vs":"1.5","tm":"01:02:03.000001","raw":16816,"nul":null,"__DORIS_DELETE_SIGN__":0}`
	if string(row) != want {
		t.Fatalf("row\n got %s\nwant %s", row, want)
	}
	// Converting the converted row again changes nothing.
	again, err := conv.Convert(dbzRecordRaw(strings.TrimSuffix(strings.TrimSuffix(want, `,"__DORIS_DELETE_SIGN__":0}`), "}") + "}"))
	if err != nil || string(again) != want {
		t.Fatalf("second conversion: %s %v", again, err)
	}
	if got := unscaledString([]byte{0x00}, 3); got != "0.000" {
		t.Fatalf("zero: %s", got)
	}
	if got := unscaledString([]byte{0xFF}, 0); got != "-1" {
		t.Fatalf("-1: %s", got)
	}
	if got := unscaledString([]byte{0x05}, 2); got != "0.05" {
		t.Fatalf("0.05: %s", got)
	}
	conv.SetValueConversions(nil, nil)
	if row, _ := conv.Convert(dbzRecordRaw(`{"d":16816}`)); !strings.Contains(string(row), `"d":16816`) {
		t.Fatalf("conversions off: %s", row)
	}
}

func dbzRecordRaw(after string) *kgo.Record {
	return &kgo.Record{Value: []byte(fmt.Sprintf(`{"op":"c","after":%s}`, after))}
}

// Date and timestamp rewriting allocates nothing per record (decimals do:
// math/big).
func TestValueConversionsTemporalAllocs(t *testing.T) {
	conv, err := NewConverter(ConvertConfig{Format: FormatDebezium})
	if err != nil {
		t.Fatal(err)
	}
	conv.SetValueConversions([]cdcschema.Field{{Name: "d", Type: "int32", Semantic: cdcschema.DebeziumDate},
		{Name: "ts", Type: "int64", Semantic: cdcschema.DebeziumMicroTimestamp}},
		[]schema.Column{{Name: "d", Type: "DATE"}, {Name: "ts", Type: "DATETIME(6)"}})
	r := dbzRecordRaw(`{"id":1,"d":16816,"ts":1529476623000005,"v":"x"}`)
	if _, err := conv.Convert(r); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(200, func() { _, _ = conv.Convert(r) }); a != 0 && !raceEnabled {
		t.Fatalf("%.1f allocs per record, want 0", a)
	}
}
