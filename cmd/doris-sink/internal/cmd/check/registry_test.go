package check

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// check reaches the registry of a registry format and warns when the
// topic's value subject is missing; a registry that is down fails.
func TestCheckRegistry(t *testing.T) {
	t.Parallel()
	srv, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := &config.Config{Kafka: config.Kafka{Topic: "orders"},
		Records: config.Records{Format: config.RecordsAvro, SchemaRegistry: config.SchemaRegistry{URLs: []string{srv.URL()}}}}
	run := func() Report {
		var r Report
		checkRegistry(context.Background(), &r, cfg)
		return r
	}
	if r := run(); len(r.Lines) != 2 || r.Lines[0].Status != OK || r.Lines[1].Status != Warn || !strings.Contains(r.Lines[1].Detail, "orders-value") {
		t.Fatalf("no subject yet: %+v", r.Lines)
	}
	if _, err := srv.Registry().Register("orders-value", sr.Schema{Schema: `{"type":"record","name":"O","fields":[]}`}); err != nil {
		t.Fatal(err)
	}
	if r := run(); len(r.Lines) != 2 || r.Lines[1].Status != OK {
		t.Fatalf("subject registered: %+v", r.Lines)
	}
	srv.Registry().SetDown(true)
	if r := run(); r.Failed != 1 || !strings.Contains(r.Lines[0].Detail, "unreachable or refusing") {
		t.Fatalf("registry down: %+v", r.Lines)
	}
	var r Report
	checkRegistry(context.Background(), &r, &config.Config{Records: config.Records{Format: config.RecordsJSON}})
	if len(r.Lines) != 0 {
		t.Fatalf("json format: %+v", r.Lines)
	}
}
