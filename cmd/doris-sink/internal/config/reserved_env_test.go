package config

import "testing"

// DORIS_SINK_FAILPOINTS shares the config prefix but is not a key: every
// command that loads config must accept it (run arms it; check, verify and
// checkpoint show must still start while it is set).
func TestReservedEnvIsNotAnUnknownKey(t *testing.T) {
	t.Parallel()
	env := []string{"DORIS_SINK_FAILPOINTS=after-precommit=crash", "DORIS_SINK_JOB__NAME=orders-eos"}
	c, err := load(t, "", env, nil, NeedJob)
	if err != nil {
		t.Fatalf("load with %v: %v", env, err)
	}
	if c.Job.Name != "orders-eos" {
		t.Errorf("job.name = %q, want orders-eos", c.Job.Name)
	}
}
