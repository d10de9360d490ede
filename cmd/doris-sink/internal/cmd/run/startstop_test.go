package run

import (
	"errors"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// signalBound is how long a test lets Run take after SIGTERM before it
// fails: far below what each wait would take without the signal (a
// fail-fast grace of 10 minutes, a Kafka request held forever), and loose
// enough for -race on a loaded machine. The figures measured with the
// binary (milliseconds) are in the note.
const signalBound = 10 * time.Second

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// holdKafka makes the cluster hold every request of key until the test
// ends; the returned channel is closed when the first one arrives.
func holdKafka(t *testing.T, e *runEnv, key kmsg.Key) <-chan struct{} {
	t.Helper()
	hit, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { close(release) }) // before the cluster closes (cleanups run last first)
	e.kc.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		once.Do(func() { close(hit) })
		e.kc.SleepControl(func() { <-release })
		return nil, nil, false
	})
	return hit
}

// Issue 30: in every wait before loading begins, SIGTERM ends run within
// moments (it took 50 s with a wrong Kafka port: the store opened under a
// context no signal could cut). A start that was failing exits 1 with the
// failure naming the key; a healthy start cut by the signal exits 0 with
// nothing read.
func TestSigtermEndsEveryStartWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// setup changes the environment and returns the event after which
		// the signal is sent: a log line's prefix, or a channel.
		setup func(t *testing.T, e *runEnv) (logPrefix string, hit <-chan struct{})
		// key is the *StartupError's key; "" for a clean stop (exit 0).
		key string
	}{
		{"kafka unreachable", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			e.brokers = closedAddr(t)
			return "kafka.brokers " + e.brokers + ": no broker answered", nil
		}, "kafka.brokers"},
		{"topic missing", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			e.topic = "missing"
			return "kafka.topic missing: the topic does not exist", nil
		}, "kafka.topic"},
		{"fe unreachable", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			e.fe = "http://" + closedAddr(t)
			return "doris.fe " + e.fe + ": no FE answered", nil
		}, "doris.fe"},
		{"slot topic", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			return "", holdKafka(t, e, kmsg.CreateTopics) // the slot topic is the first topic a start creates
		}, ""},
		{"coordinator open", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			return "", holdKafka(t, e, kmsg.InitProducerID) // fencing the job's previous process
		}, ""},
		{"connector start", func(t *testing.T, e *runEnv) (string, <-chan struct{}) {
			return "", holdKafka(t, e, kmsg.ListOffsets) // the connector resolving its start offsets
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRunEnv(t)
			prefix, hit := tc.setup(t, e)
			sigs, tap, done := e.start("delivery: { fail_fast_after: 10m }\n")
			if hit != nil {
				select {
				case <-hit:
				case err := <-done:
					t.Fatalf("Run ended before the held request: %v", err)
				}
			} else {
				tap.wait(t, prefix)
			}
			sent := time.Now()
			sigs <- syscall.SIGTERM
			var err error
			select {
			case err = <-done:
			case <-time.After(signalBound):
				t.Fatalf("Run still running %v after SIGTERM", signalBound)
			}
			took := time.Since(sent)
			t.Logf("ended %v after SIGTERM: %v", took.Round(time.Millisecond), err)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("a healthy start cut by SIGTERM: %v, want nil (exit 0)", err)
				}
				return
			}
			var se *StartupError
			if !errors.As(err, &se) || se.Key != tc.key || cmdutil.ExitCode(err) != cmdutil.ExitError ||
				strings.Contains(err.Error(), "\n") {
				t.Fatalf("Run: %v (exit %d), want one line of a *StartupError naming %s, exit 1", err, cmdutil.ExitCode(err), tc.key)
			}
		})
	}
}

// Issue 30: unreachable Kafka brokers or FEs, or a missing source topic,
// end run after delivery.fail_fast_after with one line naming the key and
// the fix; nothing of the job (state topic, slot topic) was created.
func TestStartFailsFastNamingTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *runEnv)
		key   string
		fix   string
	}{
		{"kafka unreachable", func(t *testing.T, e *runEnv) { e.brokers = closedAddr(t) }, "kafka.brokers", "fix kafka.brokers"},
		{"topic missing", func(t *testing.T, e *runEnv) { e.topic = "missing" }, "kafka.topic", "or fix kafka.topic"},
		{"fe unreachable", func(t *testing.T, e *runEnv) { e.fe = "http://" + closedAddr(t) }, "doris.fe", "fix doris.fe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRunEnv(t)
			tc.setup(t, e)
			_, _, done := e.start("delivery: { fail_fast_after: 1s }\n")
			err := result(t, done)
			var se *StartupError
			if !errors.As(err, &se) || se.Key != tc.key || !strings.Contains(err.Error(), tc.fix) ||
				strings.Contains(err.Error(), "\n") || cmdutil.ExitCode(err) != cmdutil.ExitError {
				t.Fatalf("Run: %v, want one line of a *StartupError naming %s and %q, exit 1", err, tc.key, tc.fix)
			}
			if se.For < time.Second {
				t.Errorf("gave up after %v, before delivery.fail_fast_after 1s", se.For)
			}
			for _, topic := range []string{coordlog.StateTopic("sig"), coordlog.SlotTopic("sig")} {
				if ti := e.kc.TopicInfo(topic); ti != nil {
					t.Errorf("topic %s was created by a start refused before the source was validated", topic)
				}
			}
		})
	}
}

// Issue 30: a standalone job's slot-topic error does not speak of group
// mode.
func TestSlotTopicErrorStandaloneHasNoGroupHint(t *testing.T) {
	t.Parallel()
	err := &SlotTopicError{Topic: coordlog.SlotTopic("m7"), Job: "m7", Slots: 1, Err: errors.New("unable to dial")}
	if msg := err.Error(); strings.Contains(msg, "group") || !strings.Contains(msg, "1 partition") {
		t.Errorf("standalone: %q", msg)
	}
	err.Slots = 4
	if msg := err.Error(); !strings.Contains(msg, "group mode") || !strings.Contains(msg, "4 partitions") {
		t.Errorf("group: %q", msg)
	}
}
