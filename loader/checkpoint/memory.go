package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Memory is an in-memory Store for tests of other packages. It applies the
// same checks as FileStore (validation, owner, no moving backwards) and can
// simulate a crash with Crash. Its methods are safe for concurrent use.
type Memory struct {
	d *memDurable
	// gen is this handle's generation; Crash starts a new one.
	gen int
}

// memDurable is what survives a crash: shared by every handle of a store.
type memDurable struct {
	mu      sync.Mutex
	owner   Owner
	state   *State
	gen     int
	closed  bool
	saves   int
	saveErr error
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty store of owner. The owner is validated by the
// first Save.
func NewMemory(owner Owner) *Memory {
	return &Memory{d: &memDurable{owner: owner, state: NewState(owner)}}
}

// Crash simulates a process crash and restart: the returned handle sees the
// last saved state (what a file store would hold), and this handle becomes
// dead (every call returns ErrClosed), like the killed process.
func (m *Memory) Crash() *Memory {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	m.d.gen++
	m.d.closed = false
	return &Memory{d: m.d, gen: m.d.gen}
}

// FailSaves makes every later Save return err, storing nothing, until
// FailSaves(nil).
func (m *Memory) FailSaves(err error) {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	m.d.saveErr = err
}

// Saves returns the number of successful Saves over all handles.
func (m *Memory) Saves() int {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	return m.d.saves
}

func (m *Memory) usable() error {
	if m.gen != m.d.gen {
		return fmt.Errorf("memory checkpoint store: handle abandoned by Crash: %w", ErrClosed)
	}
	if m.d.closed {
		return fmt.Errorf("memory checkpoint store: %w", ErrClosed)
	}
	return nil
}

// Load returns a copy of the last saved state.
func (m *Memory) Load(ctx context.Context) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load checkpoint state: %w", err)
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	if err := m.usable(); err != nil {
		return nil, err
	}
	return m.d.state.Clone(), nil
}

// Save validates s like FileStore.Save and stores it as a file store
// would: the state Load returns has gone through Encode and Decode.
func (m *Memory) Save(ctx context.Context, s *State) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	if err := m.usable(); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("save checkpoint state: %w", &InvariantError{Reason: "state is nil"})
	}
	if s.Owner != m.d.owner {
		return fmt.Errorf("save checkpoint state: %w", &OwnerError{Stored: m.d.owner, Config: s.Owner})
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	if err := checkTransition(m.d.state, s); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	if m.d.saveErr != nil {
		return fmt.Errorf("save checkpoint state: %w", m.d.saveErr)
	}
	// Store what a file would: encoded and decoded (positions compacted).
	b, err := Encode(s)
	if err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	st, err := Decode(b)
	if err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	m.d.state = st
	m.d.saves++
	return nil
}

// Close closes the store; a handle returned by a later Crash reopens it.
// It is idempotent.
func (m *Memory) Close() error {
	m.d.mu.Lock()
	defer m.d.mu.Unlock()
	if m.gen == m.d.gen {
		m.d.closed = true
	}
	return nil
}
