package dev

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// dev serves the Schema Registry at the printed URL: a schema registered
// there reads back by id, as a producer and doris-sink see it.
func TestDevServesSchemaRegistry(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	ep := startDev(t, f)
	if !strings.HasPrefix(ep.SchemaRegistry, "http://127.0.0.1:") {
		t.Fatalf("schema_registry %q, want a loopback URL", ep.SchemaRegistry)
	}
	cl, err := sr.NewClient(sr.URLs(ep.SchemaRegistry))
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"record","name":"O","fields":[{"name":"order_id","type":"long"}]}`
	ss, err := cl.CreateSchema(context.Background(), "orders-value", sr.Schema{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cl.SchemaByID(context.Background(), ss.ID)
	if err != nil || got.Schema != schema {
		t.Fatalf("SchemaByID: %+v %v", got, err)
	}
}

// --schema-registry "" serves none and prints none.
func TestDevWithoutSchemaRegistry(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	if ep := startDev(t, f, "--schema-registry", ""); ep.SchemaRegistry != "" {
		t.Fatalf("schema_registry %q, want none", ep.SchemaRegistry)
	}
}

// Issue 30: the default Schema Registry port taken (8081 is also Flink's
// web UI) does not fail dev: the registry serves on a free port, printed,
// and a warning names --schema-registry. A port the user chose with
// --schema-registry and is taken fails, naming the flag.
func TestDevRegistryDefaultPortTakenFallsBack(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()

	f, _, errOut := cmdutil.NewTestFactory(false)
	ready := make(chan Endpoints, 1)
	cmd := NewCmdDev(f, func(ctx context.Context, o *Options) error {
		if !o.RegistryFallback {
			t.Error("--schema-registry given: RegistryFallback is set")
		}
		o.RegistryAddr, o.RegistryFallback = taken, true // as the default 127.0.0.1:8081 would be
		o.Ready = func(ep Endpoints) { ready <- ep }
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"--fe-http", "127.0.0.1:0", "--be-http", "127.0.0.1:0", "--mysql", "127.0.0.1:0",
		"--kafka", "127.0.0.1:0", "--admin", "127.0.0.1:0", "-o", "json"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	select {
	case ep := <-ready:
		if ep.SchemaRegistry == "" || strings.HasSuffix(ep.SchemaRegistry, taken) {
			t.Errorf("schema_registry %q: want a free port, not the taken %s", ep.SchemaRegistry, taken)
		}
		if !strings.Contains(errOut.String(), taken+" is in use") || !strings.Contains(errOut.String(), "--schema-registry") ||
			!strings.Contains(errOut.String(), ep.SchemaRegistry) {
			t.Errorf("stderr %q: want the taken address, the new URL and --schema-registry", errOut)
		}
	case err := <-done:
		t.Fatalf("dev with the default registry port taken: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	f2, _, _ := cmdutil.NewTestFactory(false)
	cmd = NewCmdDev(f2, nil)
	cmd.SetArgs([]string{"--fe-http", "127.0.0.1:0", "--be-http", "127.0.0.1:0", "--mysql", "127.0.0.1:0",
		"--kafka", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--schema-registry", taken, "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "--schema-registry") {
		t.Fatalf("dev --schema-registry %s (taken) = %v, want an error naming --schema-registry", taken, err)
	}
}
