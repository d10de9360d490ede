package srtest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

const (
	v1         = `{"type":"record","name":"U","fields":[{"name":"id","type":"long"}]}`
	v2Default  = `{"type":"record","name":"U","fields":[{"name":"id","type":"long"},{"name":"e","type":"string","default":""}]}`
	v2NoDef    = `{"type":"record","name":"U","fields":[{"name":"id","type":"long"},{"name":"e","type":"string"}]}`
	v3Dropped  = `{"type":"record","name":"U","fields":[{"name":"e","type":"string","default":""}]}`
	protoFirst = `syntax = "proto3"; message M { int64 id = 1; }`
)

func start(t *testing.T) (*srtest.Server, *sr.Client) {
	t.Helper()
	srv, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cl, err := sr.NewClient(sr.URLs(srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	return srv, cl
}

func code(err error) int {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return 0
}

func TestRegisterAndRead(t *testing.T) {
	t.Parallel()
	_, cl := start(t)
	ctx := context.Background()
	a, err := cl.CreateSchema(ctx, "a-value", sr.Schema{Schema: v1})
	if err != nil {
		t.Fatal(err)
	}
	again, err := cl.CreateSchema(ctx, "a-value", sr.Schema{Schema: v1})
	if err != nil || again.ID != a.ID || again.Version != 1 {
		t.Fatalf("re-register: %+v %v, want id %d version 1 (no new version)", again, err, a.ID)
	}
	b, err := cl.CreateSchema(ctx, "b-value", sr.Schema{Schema: v1})
	if err != nil || b.ID != a.ID {
		t.Fatalf("same schema, other subject: %+v %v, want id %d reused", b, err, a.ID)
	}
	s, err := cl.SchemaByID(ctx, a.ID)
	if err != nil || s.Schema != v1 || s.Type != sr.TypeAvro {
		t.Fatalf("by id: %+v %v", s, err)
	}
	subs, err := cl.Subjects(ctx)
	if err != nil || len(subs) != 2 || subs[0] != "a-value" {
		t.Fatalf("subjects %v %v", subs, err)
	}
	if vs, err := cl.SubjectVersions(ctx, "a-value"); err != nil || len(vs) != 1 || vs[0] != 1 {
		t.Fatalf("versions %v %v", vs, err)
	}
	if ss, err := cl.SchemaByVersion(ctx, "a-value", -1); err != nil || ss.ID != a.ID || ss.Version != 1 || ss.Subject != "a-value" {
		t.Fatalf("latest %+v %v", ss, err)
	}
	if ss, err := cl.LookupSchema(ctx, "a-value", sr.Schema{Schema: v1}); err != nil || ss.ID != a.ID {
		t.Fatalf("lookup %+v %v", ss, err)
	}
	for name, err := range map[string]error{
		"unknown id":      func() error { _, err := cl.SchemaByID(ctx, 99); return err }(),
		"unknown subject": func() error { _, err := cl.SubjectVersions(ctx, "nope"); return err }(),
		"unknown version": func() error { _, err := cl.SchemaByVersion(ctx, "a-value", 7); return err }(),
		"lookup miss":     func() error { _, err := cl.LookupSchema(ctx, "a-value", sr.Schema{Schema: v2Default}); return err }(),
		"invalid avro":    func() error { _, err := cl.CreateSchema(ctx, "c", sr.Schema{Schema: `{"type":"nope"}`}); return err }(),
	} {
		want := map[string]int{"unknown id": 40403, "unknown subject": 40401, "unknown version": 40402, "lookup miss": 40403, "invalid avro": 42201}[name]
		if code(err) != want {
			t.Errorf("%s: %v (code %d), want %d", name, err, code(err), want)
		}
	}
}

// TestBackwardCompatibilityChecked: the default level BACKWARD accepts a
// field added with a default and refuses one without (a v2 reader could
// not read v1 data); NONE accepts it.
func TestBackwardCompatibilityChecked(t *testing.T) {
	t.Parallel()
	_, cl := start(t)
	ctx := context.Background()
	if _, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: v1}); err != nil {
		t.Fatal(err)
	}
	res, err := cl.CheckCompatibility(ctx, "s", -1, sr.Schema{Schema: v2NoDef})
	if err != nil || res.Is {
		t.Fatalf("check v2 without default: %+v %v, want incompatible", res, err)
	}
	if _, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: v2NoDef}); code(err) != 409 {
		t.Fatalf("register v2 without default: %v, want 409", err)
	}
	if res, err := cl.CheckCompatibility(ctx, "s", 1, sr.Schema{Schema: v2Default}); err != nil || !res.Is {
		t.Fatalf("check v2 with default: %+v %v, want compatible", res, err)
	}
	if ss, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: v2Default}); err != nil || ss.Version != 2 {
		t.Fatalf("register v2 with default: %+v %v", ss, err)
	}
	r := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "s")
	if len(r) != 1 || r[0].Err != nil {
		t.Fatalf("set NONE: %+v", r)
	}
	if _, err := cl.CreateSchema(ctx, "s", sr.Schema{Schema: v2NoDef}); err != nil {
		t.Fatalf("register under NONE: %v", err)
	}
}

func TestTransitiveAndForward(t *testing.T) {
	t.Parallel()
	_, cl := start(t)
	ctx := context.Background()
	if r := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatForwardTransitive}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	for _, s := range []string{v1, v2Default} {
		if _, err := cl.CreateSchema(ctx, "f", sr.Schema{Schema: s}); err != nil {
			t.Fatal(err)
		}
	}
	// Dropping id (no default): a v1 reader cannot read v3 data.
	if _, err := cl.CreateSchema(ctx, "f", sr.Schema{Schema: v3Dropped}); code(err) != 409 {
		t.Fatalf("v3 under FORWARD_TRANSITIVE: %v, want 409", err)
	}
	got := cl.Compatibility(ctx, "f")
	if len(got) != 1 || got[0].Err == nil {
		t.Fatalf("a subject without its own level reads %+v, want 40408", got)
	}
	if got := cl.Compatibility(ctx); got[0].Level != sr.CompatForwardTransitive {
		t.Fatalf("global level %+v", got)
	}
}

// TestOtherTypesNotFaked: srtest cannot check PROTOBUF compatibility, so a
// second PROTOBUF version is refused under BACKWARD rather than passed.
func TestOtherTypesNotFaked(t *testing.T) {
	t.Parallel()
	_, cl := start(t)
	ctx := context.Background()
	if _, err := cl.CreateSchema(ctx, "p", sr.Schema{Schema: protoFirst, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	second := sr.Schema{Schema: `syntax = "proto3"; message M { int64 id = 1; string e = 2; }`, Type: sr.TypeProtobuf}
	if _, err := cl.CreateSchema(ctx, "p", second); code(err) != 42201 {
		t.Fatalf("second PROTOBUF version under BACKWARD: %v, want 42201", err)
	}
	if _, err := cl.CheckCompatibility(ctx, "p", -1, second); code(err) != 42201 {
		t.Fatalf("compatibility check of PROTOBUF: %v, want 42201", err)
	}
	cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "p")
	ss, err := cl.CreateSchema(ctx, "p", second)
	if err != nil || ss.Version != 2 {
		t.Fatalf("under NONE: %+v %v", ss, err)
	}
	if s, err := cl.SchemaByID(ctx, ss.ID); err != nil || s.Type != sr.TypeProtobuf {
		t.Fatalf("by id: %+v %v", s, err)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	srv, cl := start(t)
	ctx := context.Background()
	srv.Registry().HideNewIDs(2)
	id, err := srv.Registry().Register("h", sr.Schema{Schema: v1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := cl.SchemaByID(ctx, id); code(err) != 40403 {
			t.Fatalf("hidden fetch %d: %v, want 40403", i, err)
		}
	}
	if _, err := cl.SchemaByID(ctx, id); err != nil {
		t.Fatalf("third fetch: %v", err)
	}
	srv.Registry().SetDown(true)
	var re *sr.ResponseError
	if _, err := cl.SchemaByID(ctx, id); !errors.As(err, &re) || re.StatusCode != 503 {
		t.Fatalf("down: %v, want 503", err)
	}
	srv.Registry().SetDown(false)
	if _, err := cl.SchemaByID(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := srv.Registry().SchemaByIDHits(); got != 4 { // the 503 never reached the handler
		t.Fatalf("%d hits, want 4", got)
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	srv, err := srtest.NewServer(srtest.WithBasicAuth("u", "p"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	anon, _ := sr.NewClient(sr.URLs(srv.URL()))
	var re *sr.ResponseError
	if _, err := anon.Subjects(context.Background()); !errors.As(err, &re) || re.StatusCode != 401 {
		t.Fatalf("anonymous: %v, want 401", err)
	}
	authed, _ := sr.NewClient(sr.URLs(srv.URL()), sr.BasicAuth("u", "p"))
	if _, err := authed.Subjects(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
