package registry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/avrorow"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

const userV1 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
const userV2 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":"string","default":"none"}]}`

func newRegistry(t *testing.T, opts ...srtest.Opt) (*srtest.Server, *sr.Client) {
	t.Helper()
	srv, err := srtest.NewServer(opts...)
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

// sleeps is a Config.Sleep that records the waits and never sleeps;
// onWait runs at each wait (a test's fault changes).
type sleeps struct {
	waits  []time.Duration
	onWait func(n int)
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	if s.onWait != nil {
		s.onWait(len(s.waits))
	}
	return nil
}

func newClient(t *testing.T, url string, sl *sleeps, mod func(*registry.Config)) *registry.Client {
	t.Helper()
	cfg := registry.Config{URLs: []string{url}, SchemaType: sr.TypeAvro, Attempts: 4, Sleep: sl.sleep}
	if mod != nil {
		mod(&cfg)
	}
	c, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// produce registers schema under subject and encodes v with pkg/sr's
// Serde (the producer's wire format).
func produce(t *testing.T, cl *sr.Client, subject, schema string, v any) (int, []byte) {
	t.Helper()
	ss, err := cl.CreateSchema(context.Background(), subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	return ss.ID, encodeWith(t, ss.ID, schema, v)
}

func encodeWith(t *testing.T, id int, schema string, v any) []byte {
	t.Helper()
	as, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	var serde sr.Serde
	serde.Register(id, map[string]any{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(as, v) }))
	b, err := serde.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendJSONThroughRegistry(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	_, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	out, err := c.AppendJSON(context.Background(), []byte("x"), value)
	if err != nil {
		t.Fatal(err)
	}
	if want := `x{"id":7,"name":"ann"}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	// The decoder is cached by id: a second record asks nothing.
	hits := srv.Registry().SchemaByIDHits()
	if _, err := c.AppendJSON(context.Background(), nil, value); err != nil {
		t.Fatal(err)
	}
	if got := srv.Registry().SchemaByIDHits(); got != hits {
		t.Fatalf("schema fetched again: %d hits, want %d", got, hits)
	}
}

// TestSchemaEvolution: records written with v1 and v2 of a subject decode
// each with its writer schema; the v1 row has no email column.
func TestSchemaEvolution(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	_, r1 := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(1), "name": "a"})
	_, r2 := produce(t, cl, "users-value", userV2, map[string]any{"id": int64(2), "name": "b", "email": "b@x"})
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	for value, want := range map[string]string{string(r1): `{"id":1,"name":"a"}`, string(r2): `{"id":2,"name":"b","email":"b@x"}`} {
		out, err := c.AppendJSON(context.Background(), nil, []byte(value))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != want {
			t.Errorf("got %s, want %s", out, want)
		}
	}
}

func TestWireFormatRefused(t *testing.T) {
	t.Parallel()
	srv, _ := newRegistry(t)
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	for _, tc := range []struct {
		value  string
		offset int
	}{{`{"id":1}`, 0}, {"\x00\x00\x01", 3}, {"", 0}} {
		_, err := c.AppendJSON(context.Background(), nil, []byte(tc.value))
		var re *registry.RecordError
		var we *registry.WireError
		if !errors.As(err, &re) || !errors.As(err, &we) || we.Offset != tc.offset {
			t.Errorf("%q: err = %v, want a RecordError with a WireError at byte %d", tc.value, err, tc.offset)
		}
		if errors.Is(err, registry.ErrUnavailable) {
			t.Errorf("%q: a wire-format error must not read as registry unavailable", tc.value)
		}
	}
	if srv.Registry().SchemaByIDHits() != 0 {
		t.Fatal("the registry was asked about a value that is not the wire format")
	}
}

func TestUndecodablePayloadNamesSchemaAndOffset(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	id, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	_, err := c.AppendJSON(context.Background(), nil, value[:len(value)-1]) // cut inside the name
	var re *registry.RecordError
	var de *avrorow.DecodeError
	if !errors.As(err, &re) || re.ID != id || !errors.As(err, &de) || de.Path != "name" {
		t.Fatalf("err = %v, want a RecordError of schema %d with a DecodeError at name", err, id)
	}
}

func TestOutageRetriedWithinBound(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	_, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	srv.Registry().SetDown(true)
	sl := &sleeps{onWait: func(n int) {
		if n == 2 {
			srv.Registry().SetDown(false) // back after the second failure
		}
	}}
	c := newClient(t, srv.URL(), sl, func(c *registry.Config) { c.BackoffMin, c.BackoffMax = time.Second, 3*time.Second })
	if _, err := c.AppendJSON(context.Background(), nil, value); err != nil {
		t.Fatalf("err = %v, want the schema once the registry is back", err)
	}
	if want := []time.Duration{time.Second, 2 * time.Second}; len(sl.waits) != 2 || sl.waits[0] != want[0] || sl.waits[1] != want[1] {
		t.Fatalf("waits %v, want %v (doubling backoff)", sl.waits, want)
	}
}

func TestOutageBeyondBoundIsUnavailable(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	id, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	srv.Registry().SetDown(true)
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	_, err := c.AppendJSON(context.Background(), nil, value)
	var fe *registry.FetchError
	if !errors.Is(err, registry.ErrUnavailable) || !errors.As(err, &fe) || fe.ID != id || fe.Attempts != 4 {
		t.Fatalf("err = %v, want a FetchError of schema %d after 4 attempts", err, id)
	}
	var re *registry.RecordError
	if errors.As(err, &re) {
		t.Fatal("an outage must not read as a bad record (it would be dead-lettered)")
	}
	// Not cached: once the registry is back the same id decodes.
	srv.Registry().SetDown(false)
	if _, err := c.AppendJSON(context.Background(), nil, value); err != nil {
		t.Fatal(err)
	}
}

// TestMaxWaitBoundsTheRetries: the waits of one schema id stop before
// their sum passes MaxWait (100+200+400 ms ≤ 1 s; 800 more would pass);
// a negative MaxWait refuses at the first failure.
func TestMaxWaitBoundsTheRetries(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	_, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	srv.Registry().SetDown(true)
	for _, tc := range []struct {
		maxWait  time.Duration
		attempts int
	}{{time.Second, 4}, {-1, 1}} {
		sl := &sleeps{}
		c := newClient(t, srv.URL(), sl, func(c *registry.Config) { c.Attempts, c.MaxWait = 0, tc.maxWait })
		_, err := c.AppendJSON(context.Background(), nil, value)
		var fe *registry.FetchError
		if !errors.As(err, &fe) || fe.Attempts != tc.attempts || len(sl.waits) != tc.attempts-1 {
			t.Fatalf("MaxWait %v: %v after waits %v, want %d attempts", tc.maxWait, err, sl.waits, tc.attempts)
		}
	}
}

func TestNotYetVisibleIDRetried(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	srv.Registry().HideNewIDs(3)
	_, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": "ann"})
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	if _, err := c.AppendJSON(context.Background(), nil, value); err != nil {
		t.Fatalf("err = %v, want the schema on the 4th attempt", err)
	}
	if got := srv.Registry().SchemaByIDHits(); got != 4 {
		t.Fatalf("%d fetches, want 4 (3 × 404, then found)", got)
	}
	srv.Registry().HideNewIDs(10)
	_, v2 := produce(t, cl, "other-value", userV2, map[string]any{"id": int64(1), "name": "b", "email": "e"})
	if _, err := c.AppendJSON(context.Background(), nil, v2); !errors.Is(err, registry.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable after the bound", err)
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	srv, _ := newRegistry(t, srtest.WithBasicAuth("u", "s3cret"))
	id, err := srv.Registry().Register("users-value", sr.Schema{Schema: userV1})
	if err != nil {
		t.Fatal(err)
	}
	value := encodeWith(t, id, userV1, map[string]any{"id": int64(1), "name": "a"})
	_, err = newClient(t, srv.URL(), &sleeps{}, nil).AppendJSON(context.Background(), nil, value)
	var fe *registry.FetchError
	if !errors.As(err, &fe) || fe.Attempts != 1 {
		t.Fatalf("err = %v, want a FetchError after 1 attempt (a 401 is not retried)", err)
	}
	ok := newClient(t, srv.URL(), &sleeps{}, func(c *registry.Config) { c.Username, c.Password = "u", "s3cret" })
	if _, err := ok.AppendJSON(context.Background(), nil, value); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaOfAnotherTypeIsABadRecord(t *testing.T) {
	t.Parallel()
	srv, _ := newRegistry(t)
	id, err := srv.Registry().Register("p-value", sr.Schema{Schema: `syntax = "proto3"; message M { int64 id = 1; }`, Type: sr.TypeProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	value := append([]byte{0, 0, 0, 0, byte(id)}, 0, 8, 1)
	_, err = newClient(t, srv.URL(), &sleeps{}, nil).AppendJSON(context.Background(), nil, value)
	var re *registry.RecordError
	if !errors.As(err, &re) || re.ID != id || errors.Is(err, registry.ErrUnavailable) {
		t.Fatalf("err = %v, want a RecordError of schema %d", err, id)
	}
}

func TestReferencesResolved(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	ctx := context.Background()
	geo := `{"type":"record","name":"Geo","namespace":"com.x","fields":[{"name":"lat","type":"double"}]}`
	addr := `{"type":"record","name":"Address","namespace":"com.x","fields":[{"name":"city","type":"string"},{"name":"geo","type":"com.x.Geo"}]}`
	user := `{"type":"record","name":"U","namespace":"com.x","fields":[{"name":"home","type":"com.x.Address"}]}`
	if _, err := cl.CreateSchema(ctx, "geo", sr.Schema{Schema: geo}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSchema(ctx, "addr", sr.Schema{Schema: addr, References: []sr.SchemaReference{{Name: "com.x.Geo", Subject: "geo", Version: 1}}}); err != nil {
		t.Fatal(err)
	}
	ss, err := cl.CreateSchema(ctx, "u-value", sr.Schema{Schema: user, References: []sr.SchemaReference{{Name: "com.x.Address", Subject: "addr", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// The producer's full schema (references inlined) encodes the value.
	full := `{"type":"record","name":"U","namespace":"com.x","fields":[{"name":"home","type":` +
		`{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},{"name":"geo","type":` + geo + `}]}}]}`
	value := encodeWith(t, ss.ID, full, map[string]any{"home": map[string]any{"city": "Oslo", "geo": map[string]any{"lat": 1.5}}})
	out, err := newClient(t, srv.URL(), &sleeps{}, nil).AppendJSON(ctx, nil, value)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"home":{"city":"Oslo","geo":{"lat":1.5}}}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
}

func TestNewRefusesUnbuiltType(t *testing.T) {
	t.Parallel()
	if _, err := registry.New(registry.Config{URLs: []string{"http://127.0.0.1:1"}, SchemaType: sr.SchemaType(99)}); err == nil {
		t.Fatal("a schema type without a decoder was accepted")
	}
	if _, err := registry.New(registry.Config{URLs: []string{"http://x"}, SchemaType: sr.TypeAvro, Username: "u", Bearer: "t"}); err == nil {
		t.Fatal("basic auth and a bearer token together were accepted")
	}
}
