package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// What a reslot does to the slot topic (ReslotResult.SlotTopicAction).
const (
	SlotTopicNone     = "none"
	SlotTopicCreate   = "create"
	SlotTopicRaise    = "raise"
	SlotTopicRecreate = "recreate"
	SlotTopicDelete   = "delete"
)

// slotTopicAction is what sets the slot topic of have partitions (-1:
// missing) to want: a one-slot job needs none (it runs without a group),
// so a topic of several partitions is deleted (the next standalone start
// creates its one-partition topic, run's layout arbiter) and a
// one-partition one kept.
func slotTopicAction(have, want int) string {
	switch {
	case want < 2 && (have < 0 || have == want):
		return SlotTopicNone // none, or a standalone start's own one-partition topic
	case want < 2:
		return SlotTopicDelete
	case have < 0:
		return SlotTopicCreate
	case have < want:
		return SlotTopicRaise
	case have > want:
		return SlotTopicRecreate
	}
	return SlotTopicNone
}

func slotTopicText(r *ReslotResult) string {
	switch r.SlotTopicAction {
	case SlotTopicCreate:
		return fmt.Sprintf("create with %d partitions", r.ToSlots)
	case SlotTopicRaise:
		return fmt.Sprintf("raise from %d to %d partitions", r.SlotTopicPartitions, r.ToSlots)
	case SlotTopicRecreate:
		return fmt.Sprintf("delete (%d partitions) and create with %d", r.SlotTopicPartitions, r.ToSlots)
	case SlotTopicDelete:
		return fmt.Sprintf("delete (%d partitions): a one-slot job runs without a group", r.SlotTopicPartitions)
	}
	if r.SlotTopicPartitions < 0 {
		return "none, none needed"
	}
	return fmt.Sprintf("already %d partitions", r.SlotTopicPartitions)
}

// slotTopicPartitions returns the slot topic's partition count, -1 when
// it does not exist.
func slotTopicPartitions(ctx context.Context, kopts []kgo.Opt, topic string) (int, error) {
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return 0, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("describe slot topic %s: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return -1, nil
	}
	if d.Err != nil {
		return 0, fmt.Errorf("describe slot topic %s: %w", topic, d.Err)
	}
	return len(d.Partitions), nil
}

// setSlotTopic gives the slot topic want partitions: it holds no records
// (its partitions are the slots the group assigns), so shrinking deletes
// and recreates it; a one-slot job's is deleted.
func setSlotTopic(ctx context.Context, kopts []kgo.Opt, topic string, have, want int) error {
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	del := func() error {
		r, err := adm.DeleteTopic(ctx, topic)
		if err == nil {
			err = r.Err
		}
		if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete slot topic %s (grant DELETE on it): %w", topic, err)
		}
		return nil
	}
	create := func() error {
		r, err := adm.CreateTopic(ctx, int32(want), -1, nil, topic)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Errorf("create slot topic %s with %d partitions (grant CREATE on it): %w", topic, want, err)
		}
		return nil
	}
	switch slotTopicAction(have, want) {
	case SlotTopicCreate:
		return create()
	case SlotTopicRaise:
		r, err := adm.UpdatePartitions(ctx, want, topic)
		if err == nil {
			err = r.Error()
		}
		if err != nil {
			return fmt.Errorf("raise slot topic %s from %d to %d partitions (grant ALTER on it): %w", topic, have, want, err)
		}
	case SlotTopicRecreate:
		if err := del(); err != nil {
			return err
		}
		return create()
	case SlotTopicDelete:
		return del()
	}
	return nil
}
