package coordlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// decideAt announces and decides the next checkpoint of st ending at pos.
func decideAt(t *testing.T, st *checkpoint.State, pos kafka.Position) {
	t.Helper()
	a, err := st.Announce(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	end, err := pos.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	st.Decide(checkpoint.Decision{ID: a.ID, Label: a.Label, TxnID: int64(100 + a.ID), End: end, DecidedAt: time.Now()})
}

// A store of a job reading two topics records both topic IDs (topic_ids)
// and commits both topics' offsets in the transaction; a reopen reads it;
// one of them recreated stops the open with a *TopicRecreatedError naming
// that topic (accepted by a rebase open); a configuration without one of
// them is refused with a *kafka.RemovedTopicError naming it.
func TestStoreSeveralTopics(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "items"); err != nil {
		t.Fatal(err)
	}
	cfg := storeConfig(c, "m1")
	cfg.Topic, cfg.Topics = "", []string{"orders", "items"}
	s := mustOpenStore(t, cfg)
	st, _ := s.Load(ctx)
	decideAt(t, st, kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 3, 1: 4}, "items": {0: 5}}))
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	rec, _, err := s.Log().Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(rec.Value, &doc); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"orders", "items"} {
		id, _ := s.Log().TopicID(ctx, topic)
		if doc.Source.TopicIDs[topic] != fmt.Sprintf("%x", id) {
			t.Errorf("topic_ids %v: %s is not %x", doc.Source.TopicIDs, topic, id)
		}
	}
	if doc.Source.Topic != "" || doc.Source.TopicID != "" {
		t.Errorf("several topics recorded in the one-topic fields too: %+v", doc.Source)
	}
	resp, err := adm.FetchOffsets(ctx, cfg.Log.Group)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]map[int32]int64{"orders": {0: 3, 1: 4}, "items": {0: 5}} {
		for p, o := range want {
			if got, ok := resp.Lookup(topic, p); !ok || got.At != o || got.Metadata != OffsetMetadata(1) {
				t.Errorf("group offset %s/%d = %+v, want %d with %q", topic, p, got, o, OffsetMetadata(1))
			}
		}
	}
	s.Close()
	mustOpenStore(t, cfg).Close() // the same topics reopen

	one := cfg
	one.Topics = []string{"orders"}
	var removed *kafka.RemovedTopicError
	if _, err := OpenStore(ctx, one); !errors.As(err, &removed) || removed.Topic != "items" {
		t.Fatalf("open without items: %v, want a *kafka.RemovedTopicError naming items", err)
	}
	rx := cfg
	rx.Topics, rx.TopicRegex = nil, "orders|items"
	mustOpenStore(t, rx).Close() // a regex job checks the topics in the connector

	if _, err := adm.DeleteTopic(ctx, "items"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "items"); err != nil {
		t.Fatal(err)
	}
	var rec2 *TopicRecreatedError
	if _, err := OpenStore(ctx, cfg); !errors.As(err, &rec2) || rec2.Topic != "items" {
		t.Fatalf("open after items was recreated: %v, want a *TopicRecreatedError naming items", err)
	}
	rb := cfg
	rb.Rebase = true
	mustOpenStore(t, rb).Close()
}

// A state written for one topic (kafka.topic: the one-topic source form)
// opens under kafka.topics naming the same topic, and its topic ID is
// still checked.
func TestStoreOneTopicDocumentUnderTopicsList(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	s := mustOpenStore(t, storeConfig(c, "m2"))
	st, _ := s.Load(ctx)
	decide(t, st, map[int32]int64{0: 1, 1: 2})
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cfg := storeConfig(c, "m2")
	cfg.Topic, cfg.Topics = "", []string{"orders"}
	s2 := mustOpenStore(t, cfg)
	got, err := s2.Load(ctx)
	if err != nil || got.Decided == nil || string(got.Decided.End) != `{"topic":"orders","offsets":{"0":1,"1":2}}` {
		t.Fatalf("load under kafka.topics: %+v %v", got, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	s2.Close()
	if _, err := adm.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	var rec *TopicRecreatedError
	if _, err := OpenStore(ctx, cfg); !errors.As(err, &rec) || rec.Topic != "orders" {
		t.Fatalf("open after orders was recreated: %v, want a *TopicRecreatedError", err)
	}
}
