package loader

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Fire passes the cut point name for a program that runs the loader's
// protocol outside a Loader (`doris-sink load`, package loader/fileload),
// so that DORIS_SINK_FAILPOINTS arms the same names there. It counts the
// hit and performs the armed action: nil to go on, the action's error, or
// an error matching ErrCrashed for a crash action, after the OnCrash hook
// ran; the caller must then abandon its work as a killed process would
// (cancel in-flight requests, write nothing more durable). dying is the
// caller's crash flag, as the loader's own: once a crash acted, every
// later hit with it returns ErrCrashed uncounted. abandon (nil: never)
// ends a Block early with ErrCrashed. A nil *Failpoints always returns nil.
func (f *Failpoints) Fire(ctx context.Context, name string, abandon <-chan struct{}, dying *atomic.Bool) error {
	err := f.fire(ctx, name, abandon, dying)
	if errors.Is(err, errCrash) {
		return fmt.Errorf("failpoint %s: %w", name, ErrCrashed)
	}
	return err
}
