package loader_test

import (
	"context"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

var _ loader.Doris = (*doris.Client)(nil)

func TestSteadyState(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"events", "events_u"} {
		t.Run(table, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.table = table
			ctx := context.Background()
			e.runToEnd(ctx, 50, 7)
			e.checkExactlyOnce(50)
		})
	}
}
