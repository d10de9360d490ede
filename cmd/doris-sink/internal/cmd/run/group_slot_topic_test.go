package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// A slot topic deleted while the group runs leaves every member owning no
// slot and loading nothing while it looks healthy: the member stops with a
// *SlotTopicError saying the topic was deleted and what to do.
func TestGroupSlotTopicDeletedWhileRunningStopsMember(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	e.slotTopicCheck = 50 * time.Millisecond
	e.produce(20)
	a := e.start("a", "")
	e.waitUntil("a owns both slots", func() bool { return len(a.owned) == 2 && a.owned[0] && a.owned[1] })
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.adm.DeleteTopics(ctx, coordlog.SlotTopic(groupJob)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		var st *SlotTopicError
		if !errors.As(err, &st) || !strings.Contains(err.Error(), "deleted while the job runs") {
			t.Errorf("slot topic deleted under the member: Run = %v, want a *SlotTopicError saying it was deleted", err)
		}
	case <-ctx.Done():
		e.mu.Lock()
		e.dumpLogsLocked()
		e.mu.Unlock()
		t.Fatal("a member whose slot topic was deleted never ended: it would idle owning no slot")
	}
}
