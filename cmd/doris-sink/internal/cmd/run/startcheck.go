package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// StartupError ends a run before anything of the job is created or
// loaded: an endpoint that never answered within delivery.fail_fast_after
// of the start (kafka.brokers, doris.fe), or a source topic that does not
// exist (kafka.topic / kafka.topics) or that the job may not read. Once a
// job has started, the same outages (a broker rolling restart, an FE
// failover) are retried as any failure is.
type StartupError struct {
	// Key is the configuration key to fix; Tried what was tried (the
	// addresses or topics).
	Key, Tried string
	// What says what is wrong, Fix what to change.
	What, Fix string
	// For is how long it was tried (0: refused at the first answer).
	For time.Duration
	// Err is the last answer or transport error.
	Err error
}

// Error is one line: the key, what was tried, what is wrong, the fix and
// the last error.
func (e *StartupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", e.Key, e.Tried, e.What)
	if e.For > 0 {
		fmt.Fprintf(&b, " (tried for %v, delivery.fail_fast_after)", e.For.Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "; %s; nothing of the job was created or loaded", e.Fix)
	if e.Err != nil {
		cause := e.Err.Error()
		var op *net.OpError
		if errors.As(e.Err, &op) {
			cause = op.Error() // "dial tcp host:port: connect: connection refused", without the URL repeated
		}
		fmt.Fprintf(&b, ": %s", strings.Join(strings.Fields(cause), " "))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *StartupError) Unwrap() error { return e.Err }

// Backoff of startRetry, and the bound of one attempt.
const (
	startBackoffMin = 100 * time.Millisecond
	startBackoffMax = 2 * time.Second
	startAttemptMax = 10 * time.Second
	// startLogEvery rate-limits startRetry's "still waiting" line.
	startLogEvery = 10 * time.Second
)

// startRetry calls attempt until it returns nil or an error it marks
// final (retry false), or until failing for grace: then it returns the
// last error. Each attempt is bounded by startAttemptMax (and by what is
// left of grace); between attempts it backs off from startBackoffMin,
// doubling to startBackoffMax. It logs the first failure and then at most
// one line per startLogEvery. When ctx ends (a signal before loading)
// it returns the last failure, which does not wrap context.Canceled, or,
// when no attempt failed yet, ctx's error.
//
// A retried *StartupError gets its For set to how long it has been failing.
func startRetry(ctx context.Context, grace time.Duration, log *slog.Logger, what string,
	attempt func(ctx context.Context) (retry bool, err error)) error {
	begin := time.Now()
	wait := startBackoffMin
	var last error
	var logged time.Time
	for n := 1; ; n++ {
		bound := startAttemptMax
		if left := grace - time.Since(begin); left > 0 && left < bound {
			bound = max(left, time.Second)
		}
		actx, cancel := context.WithTimeout(ctx, bound)
		retry, err := attempt(actx)
		cancel()
		if err == nil {
			if last != nil {
				log.Info(what+": answered", "after", time.Since(begin).Round(time.Millisecond), "attempts", n)
			}
			return nil
		}
		if ctx.Err() != nil {
			if last == nil {
				return fmt.Errorf("%s: %w", what, ctx.Err())
			}
			return last
		}
		failing := time.Since(begin)
		var se *StartupError
		if errors.As(err, &se) && retry {
			se.For = failing
		}
		last = err
		if !retry || failing >= grace {
			return err
		}
		if logged.IsZero() || time.Since(logged) >= startLogEvery {
			logged = time.Now()
			msg, cause := err.Error(), err
			if se != nil {
				msg, cause = se.Key+" "+se.Tried+": "+se.What, se.Err
			}
			log.Warn(msg+"; retrying until delivery.fail_fast_after (one line per "+startLogEvery.String()+")",
				"failing_for", failing.Round(time.Millisecond), "fail_fast_after", grace.String(), "attempts", n, "err", cause)
		}
		d := min(wait, grace-failing)
		wait = min(2*wait, startBackoffMax)
		t := time.NewTimer(max(d, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			if se != nil {
				se.For = time.Since(begin)
			}
			return last
		case <-t.C:
		}
	}
}

// checkSource waits for a broker of kafka.brokers to answer and checks that
// every source topic named by kafka.topic / kafka.topics exists, before
// anything of the job (state, slot or evidence topics) is created: an
// unreachable cluster or a missing topic still so after
// delivery.fail_fast_after, or a refusal retrying cannot fix, ends the
// run with a *StartupError naming the key.
func checkSource(ctx context.Context, cfg *config.Config, kc kafka.Config, log *slog.Logger) error {
	brokers := strings.Join(cfg.Kafka.Brokers, ",")
	topics := cfg.Kafka.SourceTopics()
	if cfg.Kafka.TopicRegex != "" {
		topics = nil // the job waits for a topic to match; only the brokers are checked
	}
	topicKey := "kafka.topic"
	if cfg.Kafka.Topic == "" {
		topicKey = "kafka.topics"
	}
	grace := cfg.Delivery.FailFastAfter
	return startRetry(ctx, grace, log, "kafka.brokers "+brokers, func(ctx context.Context) (bool, error) {
		cl, err := kgo.NewClient(kafka.ClientOpts(kc)...)
		if err != nil {
			return false, &StartupError{Key: "kafka.brokers", Tried: brokers, What: "cannot build a Kafka client",
				Fix: "fix kafka.brokers (host:port of each seed broker), kafka.tls and kafka.sasl", Err: err}
		}
		defer cl.Close()
		req := kmsg.NewPtrMetadataRequest() // AllowAutoTopicCreation false: a check never creates a topic
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		if topics == nil {
			req.Topics = []kmsg.MetadataRequestTopic{} // no topic: only the brokers answer
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			var ke *kerr.Error
			if errors.As(err, &ke) && !ke.Retriable {
				return false, &StartupError{Key: "kafka.brokers", Tried: brokers, What: "the brokers refused the client",
					Fix: "fix kafka.sasl (mechanism, user, password) and kafka.tls", Err: err}
			}
			return true, &StartupError{Key: "kafka.brokers", Tried: brokers, What: "no broker answered",
				Fix: "fix kafka.brokers (host:port of a broker's listener, as its advertised.listeners say), or start Kafka", Err: err}
		}
		for _, t := range topics {
			code := kerr.UnknownTopicOrPartition.Code
			for _, mt := range resp.Topics {
				if mt.Topic != nil && *mt.Topic == t {
					code = mt.ErrorCode
				}
			}
			switch err := kerr.ErrorForCode(code); {
			case err == nil:
			case errors.Is(err, kerr.UnknownTopicOrPartition):
				return true, &StartupError{Key: topicKey, Tried: t, What: "the topic does not exist on brokers " + brokers,
					Fix: fmt.Sprintf("create it (kafka-topics.sh --create --topic %s) or fix %s", t, topicKey), Err: err}
			case errors.Is(err, kerr.TopicAuthorizationFailed):
				return false, &StartupError{Key: topicKey, Tried: t, What: "the job may not describe the topic",
					Fix: "grant DESCRIBE and READ on it to the user of kafka.sasl", Err: err}
			default:
				return true, &StartupError{Key: topicKey, Tried: t, What: "the brokers cannot serve the topic now",
					Fix: "check the topic's partitions and their leaders", Err: err}
			}
		}
		return false, nil
	})
}

// startProbeLabel is looked up by checkFE; no load ever uses it.
const startProbeLabel = "doris-sink-start-probe"

// checkFE waits for an FE of doris.fe to answer over HTTP (get_load_state
// of a label no load uses): FEs that give no answer at all (a transport
// error, an attempt timing out) for
// delivery.fail_fast_after end the run with a *StartupError naming
// doris.fe. Any answer passes: what it may say (unknown database, refused
// credentials) is reported with its fix by the job's own start.
func checkFE(ctx context.Context, cfg *config.Config, client labelStateReader, log *slog.Logger) error {
	fes := strings.Join(cfg.Doris.FE, ",")
	return startRetry(ctx, cfg.Delivery.FailFastAfter, log, "doris.fe "+fes, func(ctx context.Context) (bool, error) {
		_, err := client.LoadState(ctx, cfg.Doris.Database, startProbeLabel)
		var te *doris.TxnError
		if err == nil || errors.As(err, &te) {
			return false, nil // an answer (*doris.TxnError: Doris's refusal, or a non-200 status)
		}
		return true, &StartupError{Key: "doris.fe", Tried: fes, What: "no FE answered over HTTP",
			Fix: "fix doris.fe (http://host:port of an FE's http_port, 8030 by default), or start Doris", Err: err}
	})
}

// labelStateReader reads a label's state (*doris.Client).
type labelStateReader interface {
	LoadState(ctx context.Context, db, label string) (doris.TxnStatus, error)
}
