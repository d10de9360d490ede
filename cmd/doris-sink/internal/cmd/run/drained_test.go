package run

import (
	"log/slog"
	"strings"
	"testing"
)

// Review P2: the drained line said "every record read was checkpointed"
// while the last decision was not committed (a heal the drain had not
// done, or a commit that did not finish). It now says so, at warn level,
// and never prints the success line then.
func TestDrainedLineNeedsCommitted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		n         int64
		decided   bool
		id        uint64
		committed bool
		level     slog.Level
		want      string
	}{
		{"never decided", 0, false, 0, false, slog.LevelInfo, "nothing was loaded"},
		{"loaded", 2, true, 3, true, slog.LevelInfo, "every record read was checkpointed"},
		{"nothing new", 0, true, 3, true, slog.LevelInfo, "nothing new was loaded"},
		{"healing", 0, true, 1, false, slog.LevelWarn, "not committed"},
		{"commit unfinished", 2, true, 3, false, slog.LevelWarn, "not committed"},
	} {
		level, msg := drainedLine(tc.n, tc.decided, tc.id, tc.committed)
		if level != tc.level || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v %q, want %v and %q", tc.name, level, msg, tc.level, tc.want)
		}
		if !tc.committed && tc.id > 0 && strings.Contains(msg, "every record read was checkpointed") {
			t.Errorf("%s: success line %q for an uncommitted decision", tc.name, msg)
		}
	}
}
