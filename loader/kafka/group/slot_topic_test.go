package group

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// A member started while the broker is not reachable yet (a cluster
// restarting) keeps asking for the slot topic and goes on once the broker
// answers, instead of exiting on the first refused dial.
func TestSlotTopicWaitsForBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there until the broker starts below

	seed := kgo.SeedBrokers("127.0.0.1:" + strconv.Itoa(port))
	tried := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), slotTopicTimeout)
		defer cancel()
		n := 0
		done <- retrySlotTopic(ctx, func(ctx context.Context) error {
			cl, err := kgo.NewClient(seed)
			if err != nil {
				return err
			}
			defer cl.Close()
			err = ensureSlotTopic(ctx, cl, "waits", 3)
			if n++; n == 1 {
				if err == nil {
					return errors.New("the first attempt succeeded with no broker listening")
				}
				close(tried) // the first attempt failed on the refused dial
			}
			return err
		})
	}()
	select {
	case <-tried:
	case err := <-done:
		t.Fatalf("gave up before the broker started: %v", err)
	}
	c, err := kfake.NewCluster(kfake.Ports(port), kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-done; err != nil {
		t.Fatalf("ensureSlotTopic after the broker came up: %v", err)
	}
	cl, err := kgo.NewClient(seed)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n, err := topicPartitions(context.Background(), cl, coordlog.SlotTopic("waits"))
	if err != nil || n != 3 {
		t.Fatalf("slot topic: %d partitions, err %v; want 3", n, err)
	}
}
