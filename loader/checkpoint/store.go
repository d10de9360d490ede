package checkpoint

import "context"

// Store is the durable log of the 2PC coordinator. Implementations are safe
// for concurrent use; Load and Save copy, so callers own the States they
// pass and receive.
type Store interface {
	// Load returns the stored state, or NewState(owner) for a new store.
	Load(ctx context.Context) (*State, error)
	// Save durably replaces the state (atomic: after a crash, Load returns
	// either the old or the new state, never a mix). It validates first and
	// writes nothing for an invalid state.
	Save(ctx context.Context, s *State) error
	// Close releases the store. It is idempotent.
	Close() error
}
