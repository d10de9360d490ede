package config

import (
	"errors"
	"testing"
)

// OnlyDoris (doris-sink load) reports only errors about the keys such a
// command reads: a run-only conflict (records.format with doris.format)
// and a bad kafka or delivery key pass, a bad doris key still fails.
func TestOnlyDorisValidatesDorisKeysOnly(t *testing.T) {
	t.Parallel()
	runOnly := `
records: {format: json}
doris: {format: csv}
kafka: {brokers: [not-a-host-port]}
delivery: {guarantee: sometimes}
`
	if _, err := load(t, runOnly, nil, nil, 0); err == nil {
		t.Fatal("the run rules accept the config: the test checks nothing")
	}
	if _, err := load(t, runOnly, nil, nil, OnlyDoris); err != nil {
		t.Fatalf("OnlyDoris refuses run-only keys: %v", err)
	}
	_, err := load(t, runOnly+"job: {name: \"a b\"}\n", []string{"DORIS_SINK_DORIS__FE=ftp://x"}, nil, OnlyDoris)
	keyError(t, err, "doris.fe")
	keyError(t, err, "job.name")
	var ce *ConflictError
	if errors.As(err, &ce) {
		t.Fatalf("OnlyDoris kept the run-only conflict %v", ce)
	}
}
