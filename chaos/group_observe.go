package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupView is what the broker says about a consumer group
// (DescribeGroups): its state, its members and how many partitions of
// topic are assigned among them.
type GroupView struct {
	State    string
	Members  int
	Assigned int
}

// String renders the view for errors.
func (v GroupView) String() string {
	return fmt.Sprintf("state %s, %d members, %d slots assigned", v.State, v.Members, v.Assigned)
}

// DescribeGroup asks the broker at brokers about group: its state, member
// count and how many partitions of topic its members hold (decoded from
// the consumer protocol's member assignments).
func DescribeGroup(ctx context.Context, brokers, group, topic string) (GroupView, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return GroupView{}, fmt.Errorf("describe group %s: %w", group, err)
	}
	defer cl.Close()
	return describeGroup(ctx, kadm.NewClient(cl), group, topic)
}

func describeGroup(ctx context.Context, adm *kadm.Client, group, topic string) (GroupView, error) {
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return GroupView{}, fmt.Errorf("describe group %s: %w", group, err)
	}
	d, ok := ds[group]
	if !ok {
		return GroupView{}, fmt.Errorf("describe group %s: not in the answer", group)
	}
	if d.Err != nil {
		return GroupView{}, fmt.Errorf("describe group %s: %w", group, d.Err)
	}
	v := GroupView{State: d.State, Members: len(d.Members)}
	for _, m := range d.Members {
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		for _, t := range a.Topics {
			if t.Topic == topic {
				v.Assigned += len(t.Partitions)
			}
		}
	}
	return v, nil
}

// groupPoll is how often waitGroupStable asks the broker again: the
// group's state is only observable by asking.
const groupPoll = 100 * time.Millisecond

// waitGroupStable waits until group is Stable with want() members (want
// is asked again each time: members may exit meanwhile; its error ends
// the wait) holding all slots partitions of topic between them, or ctx
// ends (the error names the last view).
func waitGroupStable(ctx context.Context, brokers, group, topic string, slots int, want func() (int, error)) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return fmt.Errorf("observe group %s: %w", group, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tk := time.NewTicker(groupPoll)
	defer tk.Stop()
	var (
		last    GroupView
		lastErr error
	)
	for {
		n, err := want()
		if err != nil {
			return err
		}
		v, err := describeGroup(ctx, adm, group, topic)
		if err == nil && v.State == "Stable" && v.Members == n && v.Assigned == slots {
			return nil
		}
		last, lastErr = v, err
		select {
		case <-tk.C:
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("group %s not stable with %d members and %d slots assigned: %w (last: %v)", group, n, slots, ctx.Err(), lastErr)
			}
			return fmt.Errorf("group %s not stable with %d members and %d slots assigned: %w (last: %s)", group, n, slots, ctx.Err(), last)
		}
	}
}
