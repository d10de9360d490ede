package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// writeFile writes content to a temp file and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// load loads YAML text with the given environment and flag args.
func load(t *testing.T, yaml string, env []string, args []string, need Need) (*Config, error) {
	t.Helper()
	o := LoadOptions{Need: need, Environ: func() []string { return env }}
	if yaml != "" {
		o.File = writeFile(t, "c.yaml", yaml)
	}
	if args != nil {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("topic", "", "")
		fs.StringSlice("fe", nil, "")
		fs.String("guarantee", ExactlyOnce, "")
		fs.Duration("interval", 0, "")
		BindFlag(fs, "topic", "kafka.topic")
		BindFlag(fs, "fe", "doris.fe")
		BindFlag(fs, "guarantee", "delivery.guarantee")
		BindFlag(fs, "interval", "delivery.checkpoint_interval")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		o.Flags = fs
	}
	return Load(o)
}

func mustLoad(t *testing.T, yaml string, env []string, args []string, need Need) *Config {
	t.Helper()
	c, err := load(t, yaml, env, args, need)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// keyError returns the *KeyError for key inside err, failing otherwise.
func keyError(t *testing.T, err error, key string) *KeyError {
	t.Helper()
	for _, e := range flatten(err) {
		var ke *KeyError
		if errors.As(e, &ke) && ke.Key == key {
			return ke
		}
	}
	t.Fatalf("no KeyError for %s in %v", key, err)
	return nil
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

const minimal = `
job: {name: orders-eos}
kafka: {topic: orders}
doris: {database: demo, table: orders}
`

// merge deep-merges YAML documents, later ones winning, so tests can add
// keys to a base document without duplicate mapping keys.
func merge(docs ...string) string {
	out := map[string]any{}
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			panic(err)
		}
		mergeMaps(out, m)
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
