package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// The example must do what its README line promises for every failpoint:
// crash there, recover, and print duplicates=0 missing=0.
func TestCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	for _, fp := range loader.AllFailpoints {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			o := options{events: 200, every: 30, crashAt: fp, skip: 0, dir: t.TempDir()}
			if err := app(context.Background(), o, slog.New(slog.DiscardHandler), &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "crashed at "+fp) {
				t.Errorf("never crashed at %s:\n%s", fp, out.String())
			}
			if !strings.Contains(out.String(), "rows=200 duplicates=0 missing=0") {
				t.Errorf("verification line missing:\n%s", out.String())
			}
		})
	}
}
