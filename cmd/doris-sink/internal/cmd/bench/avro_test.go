package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader/kafka/avrorow"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// The avro rows carry the json rows' data: decoded with avroSchema they
// are the json row with the amount as exact decimal text.
func TestAvroRowsCarryTheJSONData(t *testing.T) {
	t.Parallel()
	js, av := newRowGen("json", 1024, 7), newRowGen("avro", 1024, 7)
	av.schemaID = 3
	d, err := avrorow.New(avroSchema, nil, avrorow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int64{0, 1, 99999, 123456789} {
		jrow := js.appendRow(nil, i)
		value := av.appendRow(nil, i)
		id, payload, err := registry.ParseHeader(value)
		if err != nil || id != 3 {
			t.Fatalf("header: id %d, %v", id, err)
		}
		got, err := d.AppendJSON(nil, payload)
		if err != nil {
			t.Fatal(err)
		}
		var a, b map[string]any
		if err := json.Unmarshal(jrow, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatal(err)
		}
		amt, _ := b["amount"].(string)
		if f, err := strconv.ParseFloat(amt, 64); err != nil || f != a["amount"].(float64) || !strings.HasSuffix(amt, ".25") {
			t.Fatalf("row %d: amount %v, json's %v", i, b["amount"], a["amount"])
		}
		delete(a, "amount")
		delete(b, "amount")
		if string(mustMarshal(t, a)) != string(mustMarshal(t, b)) {
			t.Fatalf("row %d: avro decodes to %s, json row %s", i, got, jrow)
		}
		if len(value) >= len(jrow) {
			t.Fatalf("row %d: avro %d bytes, json %d: want smaller", i, len(value), len(jrow))
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBenchAvroBesideJSON runs json, avro and protobuf 1 KiB through real
// child processes and the in-process registry: every avro and protobuf
// record is counted by the emulator (the parent checks), and the avro and
// protobuf cases carry their ratios to the json case. No timing is
// asserted.
func TestBenchAvroBesideJSON(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan, o.Worker = &Plan{
			Combos: []Combo{
				{Format: "json", RecordBytes: 1024, Partitions: 1, Records: 400},
				{Format: "avro", RecordBytes: 1024, Partitions: 1, Records: 400},
				{Format: "protobuf", RecordBytes: 1024, Partitions: 1, Records: 400},
			},
			Modes: []string{"exactly-once"}, Interval: 200 * time.Millisecond, Repeat: 1,
		}, testWorker
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	found, foundProto := false, false
	for {
		var r Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if r.Case == "avro-1KiB-p1/exactly-once" {
			found = true
			if r.AvroToJSONRecords <= 0 || r.AvroToJSONBytes <= 0 || r.AvroToJSONCPU <= 0 || r.Records != 400 {
				t.Fatalf("avro case %+v: want its ratios to json and 400 records", r)
			}
		}
		if r.Case == "protobuf-1KiB-p1/exactly-once" {
			foundProto = true
			if r.ProtobufToJSONRecords <= 0 || r.ProtobufToJSONBytes <= 0 || r.ProtobufToJSONCPU <= 0 || r.Records != 400 || r.AvroToJSONRecords != 0 {
				t.Fatalf("protobuf case %+v: want its ratios to json (not avro's) and 400 records", r)
			}
		}
	}
	if !found || !foundProto {
		t.Fatalf("no avro or protobuf case in\n%s", out)
	}
}
