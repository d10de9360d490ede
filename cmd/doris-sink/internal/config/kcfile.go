package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/v2"
	"github.com/magiconair/properties"
)

// A Kafka Connect user's config as it is: a connector's .properties file
// (connect-standalone's form) or the JSON body of the Connect REST API
// (`{"name": ..., "config": {...}}`, or the bare config map). Both become
// the same flat map a YAML file of the connector's option names gives, so
// the Kafka Connect aliases (kcaliases.go) read all three alike.

// fileParser returns the parser of a config file by its extension:
// .properties (Java properties), .json (Connect REST body or config map),
// else YAML.
func fileParser(path string) koanf.Parser {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".properties":
		return propertiesParser{}
	case ".json":
		return connectJSONParser{}
	}
	return yaml.Parser()
}

// isYAMLFile reports whether path is read as YAML (fileParser).
func isYAMLFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext != ".properties" && ext != ".json"
}

// propertiesParser reads Java properties (github.com/magiconair/properties:
// comments, key=value / key:value / key value, continuation lines,
// \uXXXX escapes; UTF-8). ${...} is left as written: Kafka Connect's
// config providers (${file:...}) are not expanded.
type propertiesParser struct{}

// Unmarshal returns the properties as a flat map of strings.
func (propertiesParser) Unmarshal(b []byte) (map[string]any, error) {
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := l.LoadBytes(b)
	if err != nil {
		return nil, fmt.Errorf("not valid Java properties: %w", err)
	}
	out := make(map[string]any, p.Len())
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		out[k] = v
	}
	return out, nil
}

// Marshal is not supported: doris-sink never writes a config.
func (propertiesParser) Marshal(map[string]any) ([]byte, error) {
	return nil, errors.New("config: writing Java properties is not supported")
}

// connectJSONParser reads the Connect REST API body of a connector
// (POST /connectors: {"name": ..., "config": {...}}; the config's own
// "name", when set, must be the same) or a bare config map (PUT
// /connectors/<name>/config).
type connectJSONParser struct{}

// Unmarshal returns the connector's config map, its name as "name".
func (connectJSONParser) Unmarshal(b []byte) (map[string]any, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		// A second body pasted below the first would be ignored.
		return nil, fmt.Errorf("not valid JSON: content after the config's object (one connector config per file)")
	}
	cfg, ok := doc["config"].(map[string]any)
	if !ok {
		return doc, nil // a bare config map
	}
	for k := range doc {
		if k != "name" && k != "config" {
			return nil, fmt.Errorf("a Connect REST body has \"name\" and \"config\" only; found %q beside them", k)
		}
	}
	if name, ok := doc["name"]; ok {
		if own, ok := cfg["name"]; ok && fmt.Sprint(own) != fmt.Sprint(name) {
			return nil, fmt.Errorf("the body's name %q and its config's name %q differ", name, own)
		}
		cfg["name"] = name
	}
	return cfg, nil
}

// Marshal is not supported: doris-sink never writes a config.
func (connectJSONParser) Marshal(map[string]any) ([]byte, error) {
	return nil, errors.New("config: writing JSON is not supported")
}
