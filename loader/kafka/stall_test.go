package kafka

import (
	"testing"
	"time"
)

func TestStallKeepsFirstSinceUntilCleared(t *testing.T) {
	var m Metrics
	if s := m.Stall(); s.Reason != "" || !s.Since.IsZero() {
		t.Fatalf("zero Metrics stalled: %+v", s)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	m.SetStall(t0, "BE down", false)
	m.SetStall(t0.Add(time.Minute), "unknown table demo.x", true)
	s := m.Stall()
	if s.Reason != "unknown table demo.x" || !s.Since.Equal(t0) || !s.Fatal {
		t.Fatalf("Stall = %+v, want latest reason, first since, fatal", s)
	}
	m.ClearStall()
	if s := m.Stall(); s != (Stall{}) {
		t.Fatalf("after ClearStall: %+v", s)
	}
}
