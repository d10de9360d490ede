package kafka

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Issue 11: JSON fields the table lacks vanished without a word (Doris
// ignores them). With WithTableColumns the connector counts every
// occurrence in Metrics.UnknownFields and names each field once in the
// log, not per record; the rows still load exactly once.
func TestConnectorCountsFieldsTheTableLacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const n = 20
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d","colour":"red","size":%d}`, i, i, i)})
	}
	e.produce(recs...)
	var logs syncBuffer
	c := e.connector(e.config(), nil, WithTableColumns([]string{"id", "v"}),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(n)
	if got := c.Metrics().UnknownFields.Load(); got != 2*n {
		t.Errorf("UnknownFields = %d, want %d (two per record)", got, 2*n)
	}
	out := logs.String()
	for _, f := range []string{"field=colour", "field=size"} {
		if strings.Count(out, f) != 1 {
			t.Errorf("%s logged %d times, want once:\n%s", f, strings.Count(out, f), out)
		}
	}
}
