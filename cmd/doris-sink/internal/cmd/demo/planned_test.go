package demo

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A planned crash is reported once as INFO "planned crash at <failpoint>";
// errors before it, errors without the loader's cut point and a second
// crash report stay ERROR (issue 11: demo's planned crashes alarmed users).
func TestPlannedCrashHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := newPlannedCrash(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	log := slog.New(h).With("table", "demo.t")
	log.Info("narrated elsewhere")
	log.Error("failpoint crash: abandoning the loader", "at", "stream") // not armed yet: unplanned
	h.arm("mid-stream")
	log.Error("commit failed", "label", "l") // no cut point: a real error
	log.Error("failpoint crash: abandoning the loader", "at", "stream")
	log.Error("failpoint crash: abandoning the loader", "at", "stream") // a second crash was not planned
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"level=ERROR", "level=ERROR msg=\"commit failed\"", "level=INFO msg=\"planned crash at mid-stream\" table=demo.t", "level=ERROR"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q lacks %q", i, lines[i], want)
		}
	}
	if strings.Contains(lines[2], "at=") {
		t.Errorf("planned line keeps the internal cut point: %q", lines[2])
	}
}
