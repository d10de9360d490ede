package config

import (
	"errors"
	"strings"
	"testing"
)

// Issue 30: a YAML parser error names the line of the construct at fault
// (go.yaml.in/yaml/v3 reports parser errors one line low), scanner errors
// keep theirs.
func TestYAMLErrorLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		line int
		hint string
	}{
		{"job:\n  name: a\nkafka:\n  brokers: [a:1\ndoris: {}\n", 4, "not closed"},
		{"job:\n  name: a\nkafka:\n  topic: t\n   group: x\n", 5, "quote it"},
		{"job:\n  name: a\n kafka: {}\n", 3, ""},
	} {
		_, err := load(t, tc.yaml, nil, nil, 0)
		var ye *YAMLError
		if !errors.As(err, &ye) || ye.Line != tc.line || !strings.Contains(ye.Hint, tc.hint) {
			t.Errorf("YAML %q: %v, want a *YAMLError at line %d hinting %q", tc.yaml, err, tc.line, tc.hint)
		}
	}
}

// A section given a value, or a section's key at the top level, is named
// with its line and what is wrong, not only "unknown key".
func TestUnknownKeyLineAndHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml, key string
		line      int
		hint      string
	}{
		{"job: {name: a}\ndoris: http://fe:8030\n", "doris", 2, "is a section (doris.fe"},
		{"job: {name: a}\ndoris:\nfe: [http://fe:8030]\n", "doris", 2, "is empty here"},
		{"job: {name: a}\ndoris:\nfe: [http://fe:8030]\n", "fe", 3, "did you mean doris.fe?"},
		{"job: {name: a}\nuser: root\n", "user", 2, "doris.user"},
		{"job: {name: a}\nkafka:\n  topik: t\n", "kafka.topik", 3, ""},
	} {
		_, err := load(t, tc.yaml, nil, nil, 0)
		var found *UnknownKeyError
		for _, e := range flatten(err) {
			var ue *UnknownKeyError
			if errors.As(e, &ue) && ue.Key == tc.key {
				found = ue
			}
		}
		if found == nil || found.Line != tc.line || !strings.Contains(found.Hint, tc.hint) || (tc.hint == "") != (found.Hint == "") {
			t.Errorf("YAML %q: %v, want %s unknown at line %d hinting %q", tc.yaml, err, tc.key, tc.line, tc.hint)
		}
	}
}

// Outside a YAML file (the environment) the hint names the full key, not
// an indentation.
func TestUnknownKeyHintInEnvironment(t *testing.T) {
	t.Parallel()
	_, err := load(t, "", []string{"DORIS_SINK_FE=http://fe:8030"}, nil, 0)
	var ue *UnknownKeyError
	if !errors.As(err, &ue) || ue.Key != "fe" || ue.Hint != "did you mean doris.fe?" || ue.Line != 0 {
		t.Fatalf("DORIS_SINK_FE: %v, want an unknown key fe hinting doris.fe", err)
	}
}
