package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestWaitGroupStable: the harness sees a consumer group become stable
// with its members holding every partition of the subscribed topic, and
// sees the count change when a member joins; a wait for a count the group
// never reaches ends at its deadline naming the last view.
func TestWaitGroupStable(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "slots"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	brokers := kc.ListenAddrs()[0]
	join := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("slots"),
			kgo.Balancers(kgo.CooperativeStickyBalancer()))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if fs := cl.PollFetches(context.Background()); fs.IsClientClosed() {
					return
				}
			}
		}()
		return cl
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	a := join()
	defer a.Close()
	if err := waitGroupStable(ctx, brokers, "g", "slots", 4, func() (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	b := join()
	defer b.Close()
	if err := waitGroupStable(ctx, brokers, "g", "slots", 4, func() (int, error) { return 2, nil }); err != nil {
		t.Fatal(err)
	}
	v, err := DescribeGroup(ctx, brokers, "g", "slots")
	if err != nil || v.Members != 2 || v.Assigned != 4 || v.State != "Stable" {
		t.Fatalf("DescribeGroup = %v, %v; want Stable, 2 members, 4 slots", v, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if err := waitGroupStable(short, brokers, "g", "slots", 4, func() (int, error) { return 3, nil }); err == nil {
		t.Fatal("waiting for 3 members of a 2-member group succeeded")
	}
}
