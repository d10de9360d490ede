package coordlog

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// A writer slot of a job reading several topics that owns no partition of
// the first topic (sorted) is stamped all the same (a review finding of
// issue 12: it was not). The Connector's positions keep a topic whose
// partitions the filter all drops as an empty entry (partition_filter.go
// keepOwned), so the decided end is {"topics":{"a":{},"b":{...}}}; Store.Save
// builds Offsets with topic a first (no partitions) and b in Others. The
// TxnOffsetCommit must still be sent, stamped (KIP-447 "own what you
// decide" is checked by the group coordinator), with topic a left out, and
// topic b's offsets committed to kafka.group (lag tools, `kafka.start:
// committed` of a later job).
func TestDecisionStampedWhenFirstTopicEmpty(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(1, "a"), kfake.SeedTopics(2, "b"))
	ctx := ctxT(t)
	cfg := storeConfig(c, "rv")
	cfg.Topic, cfg.Topics = "", []string{"a", "b"}
	cfg.Owner.Source, cfg.Owner.Writer = "kafka:a,b", "1"
	cfg.Slots = 2
	member := joinGroup(t, c, cfg.Log.Group, "a")
	id, gen := member.GroupMetadata()
	seen := observeTxnOffsetCommits(c)
	cfg.Log.Stamp = func() (GroupStamp, error) { return GroupStamp{MemberID: id, Generation: gen}, nil }
	s := mustOpenStore(t, cfg)
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.Announce(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	// Slot 1 owns b/0 and b/1 only: topic a is an empty entry, as the
	// filtered Connector's positions hold it.
	st.Decide(checkpoint.Decision{ID: a.ID, Label: a.Label, TxnID: 100,
		Start: []byte(`{"topics":{"a":{},"b":{"0":0,"1":0}}}`), End: []byte(`{"topics":{"a":{},"b":{"0":5,"1":3}}}`),
		DecidedAt: time.Now()})
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	stamped := false
	for _, g := range seen() {
		if g.MemberID == id && g.Generation == gen {
			stamped = true
		}
	}
	if !stamped {
		t.Errorf("the decision of slot 1 sent no TxnOffsetCommit stamped member %s generation %d (seen %v): "+
			"its ownership was never checked by the group coordinator", id, gen, seen())
	}
	fo, err := admin(t, c).FetchOffsets(ctx, cfg.Log.Group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("b", 0); !ok || o.At != 5 {
		t.Errorf("group %s offset of b/0 = %+v (found %v), want 5: the decision's offsets of topic b were not committed",
			cfg.Log.Group, o, ok)
	}
}
