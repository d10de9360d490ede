package checkpoint

import (
	"errors"
	"reflect"
	"testing"
)

func TestMemoryRoundTripAndCrash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := NewMemory(testOwner)
	if s, err := m.Load(ctx); err != nil || !reflect.DeepEqual(s, NewState(testOwner)) {
		t.Fatalf("Load of new Memory = %+v, %v", s, err)
	}
	want := fullState(t)
	if err := m.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	// The caller's later edits are not stored.
	want.NextID = 99
	unsaved := fullState(t)
	unsaved.NextID = 9
	m2 := m.Crash()
	if err := m.Save(ctx, unsaved); !errors.Is(err, ErrClosed) {
		t.Fatalf("Save on the crashed handle = %v, want ErrClosed", err)
	}
	if _, err := m.Load(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Load on the crashed handle = %v, want ErrClosed", err)
	}
	got, err := m2.Load(ctx)
	if err != nil || !reflect.DeepEqual(got, fullState(t)) {
		t.Fatalf("Load after Crash = %+v, %v", got, err)
	}
	if m2.Saves() != 1 {
		t.Fatalf("Saves = %d", m2.Saves())
	}
}

func TestMemoryChecksLikeFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := NewMemory(testOwner)
	if err := m.Save(ctx, fullState(t)); err != nil {
		t.Fatal(err)
	}
	other := fullState(t)
	other.Owner.Job = "x"
	var oe *OwnerError
	if err := m.Save(ctx, other); !errors.As(err, &oe) {
		t.Fatalf("Save(other owner) = %v", err)
	}
	back := fullState(t)
	back.NextID, back.Announced = 6, nil
	var ie *InvariantError
	if err := m.Save(ctx, back); !errors.As(err, &ie) {
		t.Fatalf("Save(backwards) = %v", err)
	}
	boom := errors.New("disk full")
	m.FailSaves(boom)
	next := fullState(t)
	next.NextID = 9
	if err := m.Save(ctx, next); !errors.Is(err, boom) {
		t.Fatalf("Save with FailSaves = %v", err)
	}
	m.FailSaves(nil)
	if s, _ := m.Load(ctx); s.NextID != 8 {
		t.Fatalf("failed Save stored next_id %d", s.NextID)
	}
	if err := m.Save(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Load after Close = %v", err)
	}
	if s, err := m.Crash().Load(ctx); err != nil || s.NextID != 9 {
		t.Fatalf("reopen after Close: %+v, %v", s, err)
	}
}
