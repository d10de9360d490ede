package kafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
)

// kvDDL is a merge-on-write Unique Key table: a row with
// __DORIS_DELETE_SIGN__ = 1 (loaded through hidden_columns) removes its key
// (docs/doris-facts.md §7; Doris Load.initColumns adds the hidden column).
const kvDDL = "CREATE TABLE kv (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) " +
	`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`

// deleteEnv is an env loading json records with records.delete.field op=d
// and records.delete.tombstones into kv.
func deleteEnv(t *testing.T) (*env, DeleteConfig) {
	e := newEnv(t, 3)
	if err := e.srv.CreateTable(testDB, kvDDL); err != nil {
		t.Fatal(err)
	}
	del := DeleteConfig{Field: "op", Value: "d", Tombstones: true}
	e.table, e.props = "kv", DeleteProperties(del)
	return e, del
}

// produceDeletes writes, per id in [0, n) (partition id % 3, so each key's
// records stay in order): an upsert v=a; then ids ≡ 0 (mod 3) are deleted
// by the field (op: d), ids ≡ 1 by a tombstone keyed {"id":…}; then ids ≡ 0
// (mod 6) are inserted again with v=b. It returns the record count and the
// rows that must remain.
func produceDeletes(e *env, n int) (records int, want string) {
	var recs []*kgo.Record
	add := func(i int, key, value string) {
		r := &kgo.Record{Partition: int32(i % 3)}
		if key != "" {
			r.Key = []byte(key)
		}
		if value != "" {
			r.Value = []byte(value)
		}
		recs = append(recs, r)
	}
	for i := range n {
		add(i, "", fmt.Sprintf(`{"id":%d,"v":"a"}`, i))
	}
	for i := range n {
		switch i % 3 {
		case 0:
			add(i, "", fmt.Sprintf(`{"id":%d,"op":"d"}`, i))
		case 1:
			add(i, fmt.Sprintf(`{"id":%d}`, i), "") // tombstone
		}
	}
	for i := 0; i < n; i += 6 {
		add(i, "", fmt.Sprintf(`{"id":%d,"v":"b"}`, i))
	}
	e.produce(recs...)
	var rows [][]any
	for i := range n {
		switch {
		case i%6 == 0:
			rows = append(rows, []any{int64(i), "b"})
		case i%3 == 2:
			rows = append(rows, []any{int64(i), "a"})
		}
	}
	return len(recs), fmt.Sprint(rows)
}

// TestDeletesWithoutDebezium: the field-marked deletes and the tombstones
// remove their keys, and a key inserted again after its delete is back.
func TestDeletesWithoutDebezium(t *testing.T) {
	t.Parallel()
	e, del := deleteEnv(t)
	_, want := produceDeletes(e, 30)
	cfg := e.config()
	cfg.Delete = del
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows(testDB, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 0 {
		t.Errorf("Tombstones = %d, want 0 (they are deletes, not skipped)", got)
	}
}

// TestDeletesExactlyOnceAcrossCrash crashes the loader at every cut point
// (docs/design.md §2) during the third checkpoint and restarts on the same
// store and emulator: the final rows are exact, and (in the emulator's
// counting mode, which counts the rows of each applied load) every record,
// deletes and tombstones included, was applied exactly once.
func TestDeletesExactlyOnceAcrossCrash(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailMidStream, loader.FailAfterPrecommit, loader.FailBeforeDecide,
		loader.FailAfterDecide, loader.FailMidCommit} {
		for _, counting := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/counting=%v", fp, counting), func(t *testing.T) {
				t.Parallel()
				e, del := deleteEnv(t)
				if err := e.srv.SetCounting(testDB, "kv", counting); err != nil {
					t.Fatal(err)
				}
				records, want := produceDeletes(e, 30)
				cfg := e.config()
				cfg.Delete = del
				fps := loader.NewFailpoints()
				var h *loader.Handle
				var decided int
				c := e.connector(cfg, fps, WithOnCheckpoint(func(s CheckpointStats) {
					if s.Err == nil {
						if decided++; decided == 2 {
							var err error
							if h, err = fps.Arm(fp, loader.Crash()); err != nil {
								t.Error(err)
							}
						}
					}
				}))
				if err := e.runToEnd(ctxFor(t), c); !errors.Is(err, loader.ErrCrashed) {
					t.Fatalf("Run: %v, want a crash at %s", err, fp)
				}
				if h == nil || h.Hits() != 1 {
					t.Fatalf("failpoint %s not hit", fp)
				}
				if err := e.runToEnd(ctxFor(t), e.connector(cfg, nil)); err != nil {
					t.Fatalf("Run after restart: %v", err)
				}
				if counting {
					rows, _, err := e.srv.Counts(testDB, "kv")
					if err != nil {
						t.Fatal(err)
					}
					if rows != int64(records) {
						t.Fatalf("applied %d rows, want %d (each record once)", rows, records)
					}
					return
				}
				rows, err := e.srv.Rows(testDB, "kv")
				if err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(rows); got != want {
					t.Fatalf("rows %s, want %s", got, want)
				}
			})
		}
	}
}

// A tombstone whose key is not a JSON object cannot be a delete: it is a
// bad record (here: dead-lettered), never silently dropped.
func TestTombstoneWithoutJSONKeyIsDeadLettered(t *testing.T) {
	t.Parallel()
	e, del := deleteEnv(t)
	if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, "kv-dlq"); err != nil {
		t.Fatal(err)
	}
	e.produce(&kgo.Record{Value: []byte(`{"id":1,"v":"a"}`)}, &kgo.Record{Key: []byte("1")}, &kgo.Record{})
	cfg := e.config()
	cfg.Delete, cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = del, "kv-dlq", true
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := c.Metrics().DeadLettered.Load(); got != 2 {
		t.Fatalf("DeadLettered = %d, want 2 (a non-JSON key, no key)", got)
	}
	rows, err := e.srv.Rows(testDB, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != "[[1 a]]" {
		t.Fatalf("rows %s", got)
	}
}
