package demo

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// plannedCrash is the slog handler of one demo run: it passes ERROR records
// on (an unplanned error stays an error) and reports the loader's crash at
// the failpoint the demo armed as INFO "planned crash at <failpoint>", so a
// new user is not alarmed by crashes the demo causes on purpose.
//
// The loader reports a failpoint crash as one ERROR record carrying the cut
// point in an "at" attribute, right after Failpoints.OnCrash ran (which
// calls arm). Only that record is rewritten, and only after arm: an ERROR
// before the planned crash, or one without "at", passes unchanged.
type plannedCrash struct {
	inner slog.Handler
	// planned is the failpoint that crashed ("" before OnCrash), shared by
	// the handlers WithAttrs/WithGroup derive.
	planned *atomic.Pointer[string]
}

// newPlannedCrash wraps inner, which must accept INFO records.
func newPlannedCrash(inner slog.Handler) *plannedCrash {
	return &plannedCrash{inner: inner, planned: &atomic.Pointer[string]{}}
}

// arm records that failpoint name crashed on purpose (the Failpoints.OnCrash
// hook).
func (h *plannedCrash) arm(name string) { h.planned.Store(&name) }

// Enabled lets only errors through: the demo narrates everything else.
func (h *plannedCrash) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

// Handle rewrites the planned crash record and passes the rest on.
func (h *plannedCrash) Handle(ctx context.Context, r slog.Record) error {
	name := h.planned.Load()
	if name == nil || !hasAttr(r, "at") {
		return h.inner.Handle(ctx, r)
	}
	h.planned.Store(nil) // one crash, one report
	info := slog.NewRecord(r.Time, slog.LevelInfo, "planned crash at "+*name, r.PC)
	return h.inner.Handle(ctx, info)
}

// WithAttrs keeps the shared planned state.
func (h *plannedCrash) WithAttrs(as []slog.Attr) slog.Handler {
	return &plannedCrash{inner: h.inner.WithAttrs(as), planned: h.planned}
}

// WithGroup keeps the shared planned state.
func (h *plannedCrash) WithGroup(name string) slog.Handler {
	return &plannedCrash{inner: h.inner.WithGroup(name), planned: h.planned}
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}
