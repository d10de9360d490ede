package config

import (
	"strings"
	"testing"
)

// job.instance must be an id Kafka accepts as group.instance.id: one it
// refuses would fail every join of the member.
func TestInstanceIDProblem(t *testing.T) {
	for _, ok := range []string{"", "host-1", "a.b_c-D9", strings.Repeat("x", 249)} {
		if msg := InstanceIDProblem(ok); msg != "" {
			t.Errorf("InstanceIDProblem(%q) = %q, want accepted", ok, msg)
		}
	}
	for _, bad := range []string{".", "..", "host 1", "host/1", "héte", strings.Repeat("x", 250)} {
		if msg := InstanceIDProblem(bad); msg == "" {
			t.Errorf("InstanceIDProblem(%q) accepted it", bad)
		}
	}
}

// A job.instance Kafka would refuse is refused at load, naming the key.
func TestJobInstanceRefusedAtLoad(t *testing.T) {
	t.Parallel()
	_, err := load(t, merge(minimal, "job: {slots: 2, instance: \"host 1\"}\n"), nil, nil, NeedRun)
	ke := keyError(t, err, "job.instance")
	if !strings.Contains(ke.Allowed, "[a-zA-Z0-9._-]") {
		t.Errorf("job.instance 'host 1': %v, want the allowed characters named", err)
	}
}
