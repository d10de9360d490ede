package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// EnvPrefix starts every environment variable doris-sink reads. The rest of
// the name is the key in upper case with "__" for ".":
// DORIS_SINK_KAFKA__BROKERS=a:9092,b:9092 sets kafka.brokers.
const EnvPrefix = "DORIS_SINK_"

// ReservedEnv are DORIS_SINK_* variables that are not config keys: the
// loader's failpoints, armed only by `doris-sink run` (docs/design.md; STYLE.md
// "Failpoints"). Load skips them instead of refusing them as unknown keys.
var ReservedEnv = []string{"DORIS_SINK_FAILPOINTS"}

// flagKeyAnnotation marks a flag with the config key it sets.
const flagKeyAnnotation = "doris-sink/config-key"

// Need says which keys a command requires beyond the always-valid defaults.
type Need uint

// Requirements. Run needs them all; operator commands need fewer.
const (
	// NeedJob requires job.name (and so a data_dir).
	NeedJob Need = 1 << iota
	// NeedTable requires doris.database and doris.table.
	NeedTable
	// NeedKafka requires kafka.topic.
	NeedKafka
	// OnlyDoris validates only the Doris connection and Stream Load keys
	// (doris.*, plus job.name when set): `doris-sink load` reads nothing
	// else, so the rules of a run job's kafka, records, delivery, metrics
	// and log keys (records.format with doris.format, ...) do not refuse
	// the job's config given to it. Keys are still type-checked and
	// unknown keys still refused.
	OnlyDoris
	// NeedRun is everything `doris-sink run` and `check` need.
	NeedRun = NeedJob | NeedTable | NeedKafka
)

// LoadOptions says where Load reads from.
type LoadOptions struct {
	// File is the config file (YAML; .properties or .json: a Kafka Connect
	// connector config); empty for none.
	File string
	// Environ returns the environment ("KEY=value" strings), normally
	// os.Environ; nil reads no environment.
	Environ func() []string
	// Flags are command-line flags; only flags bound with BindFlag are
	// read, and only those the user set override earlier sources.
	Flags *pflag.FlagSet
	// Need lists the required keys.
	Need Need
	// ReadFile reads the password files; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
}

// BindFlag makes flag name of fs set the config key.
func BindFlag(fs *pflag.FlagSet, name, key string) {
	if _, ok := lookupKey(key); !ok {
		panic(fmt.Sprintf("config.BindFlag: unknown key %q", key)) // programming error
	}
	if err := fs.SetAnnotation(name, flagKeyAnnotation, []string{key}); err != nil {
		panic(fmt.Sprintf("config.BindFlag: %v", err)) // programming error: no such flag
	}
}

// Load reads defaults, then o.File, then the environment, then flags,
// and validates the result once. Errors are *KeyError, *ConflictError,
// *UnknownKeyError or *FileError (joined when there are several).
func Load(o LoadOptions) (*Config, error) {
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults(), "."), nil); err != nil {
		return nil, fmt.Errorf("config defaults: %w", err)
	}
	origin := map[string]string{}
	var warnings []string
	if o.File != "" {
		w, err := loadFile(k, o, origin)
		if err != nil {
			return nil, err
		}
		warnings = w
	}
	if o.Environ != nil {
		w, err := loadEnv(k, o.Environ, origin)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
	}
	if o.Flags != nil {
		if err := loadFlags(k, o.Flags); err != nil {
			return nil, err
		}
	}
	c, err := decode(k.All(), origin)
	if err != nil {
		return nil, err
	}
	c.Warnings = warnings
	if err := c.readSecrets(o.ReadFile); err != nil {
		return nil, err
	}
	c.derive()
	if err := c.validateFor(o.Need); err != nil {
		return nil, err
	}
	c.Warnings = append(c.Warnings, c.securityWarnings(os.Stat)...)
	return c, nil
}

func loadFile(k *koanf.Koanf, o LoadOptions, origin map[string]string) ([]string, error) {
	fk := koanf.New(".")
	if err := fk.Load(file.Provider(o.File), fileParser(o.File)); err != nil {
		return nil, &FileError{Path: o.File, Err: yamlError(err)}
	}
	flat, orig, warnings, err := translateAliases(normalize(fk.All()))
	if err != nil {
		return nil, err
	}
	var lines map[string]int
	if data, err := os.ReadFile(o.File); err == nil && isYAMLFile(o.File) {
		lines = keyLines(data)
	}
	if err := checkKnownAt(flat, "file "+o.File, lines); err != nil {
		return nil, err
	}
	for k2, v := range orig {
		origin[k2] = v
	}
	// Replace, not merge, the maps a file sets wholesale (kafka.start may
	// switch between a mode and an offsets map).
	if _, ok := flat["kafka.start"]; !ok && hasPrefix(flat, "kafka.start.") {
		k.Delete("kafka.start")
	}
	if err := k.Load(confmap.Provider(flat, "."), nil); err != nil {
		return nil, &FileError{Path: o.File, Err: err}
	}
	return warnings, nil
}

// loadEnv reads DORIS_SINK_* variables. The Flink and Kafka connector
// names are accepted too, in the same spelling (DORIS_SINK_DORIS__URLS sets
// doris.urls, DORIS_SINK_BUFFER__FLUSH__TIME buffer.flush.time).
func loadEnv(k *koanf.Koanf, environ func() []string, origin map[string]string) ([]string, error) {
	ek := koanf.New(".")
	err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: environ,
		TransformFunc: func(name, v string) (string, any) {
			if slices.Contains(ReservedEnv, name) {
				return "", nil // skipped by the provider
			}
			key := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, EnvPrefix)), "__", ".")
			if kk, ok := lookupKey(key); ok && kk.kind == kindList {
				return key, splitList(v)
			}
			return key, v
		},
	}), nil)
	if err != nil {
		return nil, fmt.Errorf("config environment: %w", err)
	}
	flat, orig, warnings, err := translateAliases(normalize(ek.All()))
	if err != nil {
		return nil, err
	}
	if err := checkKnown(flat, "environment "+EnvPrefix+"*"); err != nil {
		return nil, err
	}
	for k2 := range flat {
		delete(origin, k2) // set directly here: no longer the file's alias
	}
	for k2, v := range orig {
		origin[k2] = v
	}
	if _, ok := flat["kafka.start"]; ok {
		k.Delete("kafka.start")
	}
	return warnings, k.Load(confmap.Provider(flat, "."), nil)
}

func loadFlags(k *koanf.Koanf, fs *pflag.FlagSet) error {
	return k.Load(posflag.ProviderWithFlag(fs, ".", k, func(f *pflag.Flag) (string, any) {
		ann := f.Annotations[flagKeyAnnotation]
		if len(ann) == 0 {
			return "", nil
		}
		return ann[0], posflag.FlagVal(fs, f)
	}), nil)
}

// normalize rewrites shorthand forms: kafka.tls: true → kafka.tls.enabled.
func normalize(flat map[string]any) map[string]any {
	if v, ok := flat["kafka.tls"]; ok {
		delete(flat, "kafka.tls")
		flat["kafka.tls.enabled"] = v
	}
	return flat
}

func checkKnown(flat map[string]any, source string) error { return checkKnownAt(flat, source, nil) }

// checkKnownAt refuses the unknown keys of flat, with their line in the
// file when lines has it, and what is wrong when it is not a typo.
func checkKnownAt(flat map[string]any, source string, lines map[string]int) error {
	names := make([]string, 0, len(flat))
	for k := range flat {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names {
		if _, ok := lookupKey(n); !ok {
			errs = append(errs, &UnknownKeyError{Key: n, Source: source, Line: lines[n], Hint: unknownKeyHint(n, flat[n], lines != nil)})
		}
	}
	return errors.Join(errs...)
}

func hasPrefix(flat map[string]any, p string) bool {
	for k := range flat {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
