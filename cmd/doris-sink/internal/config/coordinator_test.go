package config

import "testing"

// job.coordinator defaults to kafka, accepts file and kafka (any case, also from the
// environment) and refuses anything else naming the key and the choices.
func TestJobCoordinator(t *testing.T) {
	t.Parallel()
	if c := mustLoad(t, minimal, nil, nil, NeedRun); c.Job.Coordinator != CoordinatorKafka {
		t.Errorf("default job.coordinator %q, want kafka", c.Job.Coordinator)
	}
	if c := mustLoad(t, merge(minimal, "job: {coordinator: file}\n"), nil, nil, NeedRun); c.Job.Coordinator != CoordinatorFile {
		t.Errorf("job.coordinator %q, want file (still selectable)", c.Job.Coordinator)
	}
	if c := mustLoad(t, merge(minimal, "job: {coordinator: Kafka}\n"), nil, nil, NeedRun); c.Job.Coordinator != CoordinatorKafka {
		t.Errorf("job.coordinator %q, want kafka", c.Job.Coordinator)
	}
	if c := mustLoad(t, minimal, []string{"DORIS_SINK_JOB__COORDINATOR=kafka"}, nil, NeedRun); c.Job.Coordinator != CoordinatorKafka {
		t.Errorf("job.coordinator from the environment %q, want kafka", c.Job.Coordinator)
	}
	_, err := load(t, merge(minimal, "job: {coordinator: zookeeper}\n"), nil, nil, NeedRun)
	if ke := keyError(t, err, "job.coordinator"); ke.Allowed == "" {
		t.Errorf("error does not list the allowed values: %v", err)
	}
}
