package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Aliases maps the Doris Flink connector's option names to doris-sink keys.
// They are accepted in the YAML file and the environment
// (docs/configuration.md has the table). Each entry converts the Flink
// value into canonical keys.
type alias struct {
	flink  string
	target string // canonical key(s), for documentation
	doc    string
	apply  func(v any) (map[string]any, error)
}

var aliases = []alias{
	{flink: "sink.label-prefix", target: "job.name", doc: "validated as a doris-sink job name", apply: same("job.name")},
	{flink: "sink.enable-2pc", target: "delivery.guarantee", doc: "true → exactly-once, false → at-least-once", apply: enable2PC},
	{flink: "sink.enable.batch-mode", target: "delivery.batch_mode", doc: "refused (batch mode is not implemented)", apply: same("delivery.batch_mode")},
	{flink: "fenodes", target: "doris.fe", doc: "comma list host:port; http:// is added", apply: nodes("doris.fe")},
	{flink: "benodes", target: "doris.be", doc: "comma list host:port; http:// is added", apply: nodes("doris.be")},
	{flink: "jdbc-url", target: "doris.mysql", doc: "jdbc:mysql://host:port[/db] → host:port", apply: jdbcURL},
	{flink: "username", target: "doris.user", apply: same("doris.user")},
	{flink: "password", target: "doris.password", apply: same("doris.password")},
	{flink: "table.identifier", target: "doris.database, doris.table", doc: "db.table", apply: tableIdentifier},
	{flink: "sink.buffer-flush.interval", target: "delivery.checkpoint_interval", doc: "Flink durations (10s, 1min) accepted", apply: same("delivery.checkpoint_interval")},
	{flink: "sink.buffer-flush.max-bytes", target: "delivery.checkpoint_max_bytes", apply: same("delivery.checkpoint_max_bytes")},
	{flink: "sink.buffer-flush.max-rows", target: "delivery.checkpoint_max_rows", apply: same("delivery.checkpoint_max_rows")},
	{flink: "sink.properties.format", target: "doris.format", apply: same("doris.format")},
	{flink: "sink.parallelism", target: "job.slots", doc: "writer slots: start up to that many processes of the config (group mode)", apply: same("job.slots")},
	{flink: "sink.properties.*", target: "doris.properties.*", doc: "any other Stream Load header"},
}

// ignoredFlink are Flink connector options that have no doris-sink
// equivalent; they are accepted with a warning saying why.
var ignoredFlink = map[string]string{
	"connector":                 "doris-sink is the connector",
	"sink.max-retries":          "doris-sink retries commits until they resolve and never re-sends a load blindly",
	"sink.buffer-size":          "bodies are streamed; memory is bounded without a buffer size",
	"sink.buffer-count":         "bodies are streamed; memory is bounded without buffers",
	"sink.check-interval":       "doris-sink has no load-check loop",
	"sink.use-cache":            "bodies are replayed from Kafka, not from a cache",
	"sink.enable-delete":        "deletes follow records.format: debezium, or records.delete.* for json",
	"sink.ignore.update-before": "records.format: debezium uses after/before as documented",
	"sink.ignore.commit-error":  "doris-sink never ignores a commit error",
	"sink.flush.queue-size":     "bodies are streamed",
	"doris.request.retries":     "reads are not used by the sink",
}

// Aliases returns the Flink option → doris-sink key table for
// documentation: each row is {flink option, doris-sink key(s), note}.
func Aliases() [][3]string {
	rows := make([][3]string, 0, len(aliases)+len(ignoredFlink))
	for _, a := range aliases {
		rows = append(rows, [3]string{a.flink, a.target, a.doc})
	}
	ign := make([]string, 0, len(ignoredFlink))
	for k := range ignoredFlink {
		ign = append(ign, k)
	}
	sort.Strings(ign)
	for _, k := range ign {
		rows = append(rows, [3]string{k, "(ignored, warning)", ignoredFlink[k]})
	}
	return rows
}

// translateAliases rewrites the Flink and Kafka connector names
// (kcaliases.go) in a flat key map into
// canonical keys. origin maps each canonical key set by an alias to the
// alias, for error messages. A canonical key given both directly and by an
// alias with different values is a *ConflictError.
func translateAliases(flat map[string]any) (out map[string]any, origin map[string]string, warnings []string, err error) {
	out = map[string]any{}
	origin = map[string]string{}
	var errs errList
	type set struct {
		key   string
		val   any
		alias string
	}
	var fromAlias []set
	kc, warnings, kerr := kcTranslate(flat) // removes the Kafka connector names from flat
	if kerr != nil {
		errs.add(kerr)
	}
	for _, s := range kc {
		fromAlias = append(fromAlias, set{s.key, s.val, s.alias})
	}
	names := make([]string, 0, len(flat))
	for k := range flat {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := flat[k]
		if why, ok := ignoredFlink[k]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: Flink option ignored: %s", k, why))
			continue
		}
		if rest, ok := strings.CutPrefix(k, "sink.properties."); ok && rest != "format" {
			fromAlias = append(fromAlias, set{"doris.properties." + rest, fmt.Sprint(v), k})
			continue
		}
		a, ok := findAlias(k)
		if !ok {
			out[k] = v
			continue
		}
		m, aerr := a.apply(v)
		if aerr != nil {
			errs.add(&KeyError{Key: k, Value: fmt.Sprint(v), Allowed: aerr.Error()})
			continue
		}
		mk := make([]string, 0, len(m))
		for t := range m {
			mk = append(mk, t)
		}
		sort.Strings(mk)
		for _, t := range mk {
			fromAlias = append(fromAlias, set{t, m[t], k})
		}
	}
	for _, s := range fromAlias {
		if prev, ok := out[s.key]; ok && fmt.Sprint(prev) != fmt.Sprint(s.val) {
			other := s.key
			if o, ok := origin[s.key]; ok {
				other = o
			}
			errs.add(&ConflictError{
				Keys:   []string{fmt.Sprintf("%s=%v", other, redactIfSecret(s.key, prev)), fmt.Sprintf("%s=%v", s.alias, redactIfSecret(s.key, s.val))},
				Reason: "both set " + s.key + " to different values",
				Fix:    "keep one of them",
			})
			continue
		}
		out[s.key] = s.val
		origin[s.key] = s.alias
	}
	return out, origin, warnings, errs.err()
}

func findAlias(k string) (alias, bool) {
	for _, a := range aliases {
		if a.flink == k && a.apply != nil {
			return a, true
		}
	}
	return alias{}, false
}

func redactIfSecret(key string, v any) any {
	if k, ok := lookupKey(key); ok && k.Secret {
		return "<redacted>"
	}
	return v
}

func same(key string) func(any) (map[string]any, error) {
	return func(v any) (map[string]any, error) { return map[string]any{key: v}, nil }
}

func enable2PC(v any) (map[string]any, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(fmt.Sprint(v)))
	if err != nil {
		return nil, fmt.Errorf("want true or false")
	}
	if b {
		return map[string]any{"delivery.guarantee": ExactlyOnce}, nil
	}
	return map[string]any{"delivery.guarantee": AtLeastOnce}, nil
}

func nodes(key string) func(any) (map[string]any, error) {
	return func(v any) (map[string]any, error) {
		var list []string
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				list = append(list, fmt.Sprint(e))
			}
		default:
			list = splitList(fmt.Sprint(v))
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("want a comma list of host:port")
		}
		for i, n := range list {
			if !strings.Contains(n, "://") {
				list[i] = "http://" + n
			}
		}
		return map[string]any{key: list}, nil
	}
}

func jdbcURL(v any) (map[string]any, error) {
	s := strings.TrimSpace(fmt.Sprint(v))
	rest, ok := strings.CutPrefix(s, "jdbc:mysql://")
	if !ok {
		return nil, fmt.Errorf("want jdbc:mysql://host:port[/db]")
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, "?")
	if host == "" {
		return nil, fmt.Errorf("want jdbc:mysql://host:port[/db]")
	}
	return map[string]any{"doris.mysql": host}, nil
}

func tableIdentifier(v any) (map[string]any, error) {
	db, table, ok := strings.Cut(strings.TrimSpace(fmt.Sprint(v)), ".")
	if !ok || db == "" || table == "" || strings.Contains(table, ".") {
		return nil, fmt.Errorf("want db.table")
	}
	return map[string]any{"doris.database": db, "doris.table": table}, nil
}

// splitList splits a comma list, trimming spaces and dropping empties.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
