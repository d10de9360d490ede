package bench

import (
	"bytes"
	"testing"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// A json_schema value is the json row of the same size after the Confluent
// header: the same logical data, 5 bytes longer.
func TestJSONSchemaRowsAreTheJSONRows(t *testing.T) {
	t.Parallel()
	js, jss := newRowGen("json", 1024, 7), newRowGen("json_schema", 1024, 7)
	jss.jsonSchemaID = 9
	for _, i := range []int64{0, 1, 99999, 123456789} {
		value := jss.appendRow(nil, i)
		id, payload, err := registry.ParseHeader(value)
		if err != nil || id != 9 {
			t.Fatalf("row %d: header id %d, %v", i, id, err)
		}
		if want := js.appendRow(nil, i); !bytes.Equal(payload, want) {
			t.Fatalf("row %d: payload %q, json row %q", i, payload, want)
		}
	}
}
