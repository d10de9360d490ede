package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 25: a user:password@host in any address-like key, with or without
// a scheme, never reaches a config error, a warning or the redacted dump
// (on main, kafka.brokers and a scheme-less records.schema_registry.urls
// echoed the password).
func TestConfigRedactsUserinfoInEveryAddressKey(t *testing.T) {
	t.Parallel()
	const leak = "KPWLEAK"
	values := []string{
		"u:" + leak + "@127.0.0.1:1",
		"http://u:" + leak + "@127.0.0.1:1",
		":" + leak + "@sr.example:8081/x",
		"u:" + leak + "@h@127.0.0.1:1",
	}
	keys := []struct{ yaml, base string }{
		{"kafka: {brokers: [%q]}", minimal},
		{"doris: {fe: [%q]}", minimal},
		{"doris: {be: [%q]}", minimal},
		{"doris: {mysql: %q}", minimal},
		{"doris: {redirect_allow_hosts: [%q]}", minimal},
		{"metrics: {listen: %q}", minimal},
		{"records: {schema_registry: {urls: [%q]}}", merge(minimal, "records: {format: avro}\n")},
		{"records: {schema_registry: {urls: [http://127.0.0.1:8081, %q]}}", merge(minimal, "records: {format: protobuf}\n")},
	}
	for _, k := range keys {
		for _, v := range values {
			doc := merge(k.base, strings.Replace(k.yaml, "%q", `"`+v+`"`, 1)+"\n")
			c, err := load(t, doc, nil, nil, NeedRun)
			if err != nil {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%s = %q: the error leaks the password: %v", k.yaml, v, err)
				}
				continue
			}
			dump, jerr := json.Marshal(c.Redacted())
			if jerr != nil {
				t.Fatal(jerr)
			}
			if strings.Contains(string(dump), leak) || strings.Contains(strings.Join(c.Warnings, "\n"), leak) {
				t.Errorf("%s = %q: accepted, and the dump or a warning leaks the password: %s %q", k.yaml, v, dump, c.Warnings)
			}
		}
	}
}
