package coordlog

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// (design.md §7.2 "Generation-stamped decisions": ILLEGAL_GENERATION,
// REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID and
// STALE_MEMBER_EPOCH are never retried or resent; isGenerationKafka): only
// ILLEGAL_GENERATION was tested. Each of the other answers to a decision's
// TxnOffsetCommit ends the save with a *GenerationError wrapping
// kafka.ErrNotOwner and the Kafka error after ONE TxnOffsetCommit, and
// nothing of the decision is visible.
func TestEveryMembershipAnswerNeverResent(t *testing.T) {
	t.Parallel()
	for _, answer := range []*kerr.Error{kerr.RebalanceInProgress, kerr.UnknownMemberID, kerr.FencedInstanceID, kerr.StaleMemberEpoch} {
		t.Run(answer.Message, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			ctx := ctxT(t)
			cfg := testConfig(c, "gr")
			member := joinGroup(t, c, cfg.Group, "orders")
			id, gen := member.GroupMetadata()
			cfg.Stamp = func() (GroupStamp, error) { return GroupStamp{MemberID: id, Generation: gen}, nil }
			l := mustOpen(t, cfg)
			if err := l.Commit(ctx, []byte("v1"), offsets(1, 5, 6)); err != nil {
				t.Fatalf("commit stamped with the live generation: %v", err)
			}
			seen := observeTxnOffsetCommits(c)
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: answer, Count: 1})
			err := l.Commit(ctx, []byte("v2"), offsets(2, 7, 8))
			var ge *GenerationError
			if !errors.As(err, &ge) || !errors.Is(err, kafka.ErrNotOwner) || !errors.Is(err, answer) {
				t.Fatalf("decision answered %s: %v, want *GenerationError wrapping ErrNotOwner and %s", answer.Message, err, answer.Message)
			}
			if n := len(seen()); n != 1 {
				t.Errorf("decision answered %s: %d TxnOffsetCommits sent, want 1 (never resent)", answer.Message, n)
			}
			rec, _, err := l.Load(ctx)
			if err != nil || string(rec.Value) != "v1" {
				t.Fatalf("after the refused decision Load = %q, %v; want v1", rec.Value, err)
			}
		})
	}
}
