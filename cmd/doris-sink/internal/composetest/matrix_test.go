package composetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// The matrix's dimensions (issue 28).
var (
	formats  = []string{"json", "csv", "debezium", "avro", "protobuf", "json_schema"}
	envs     = []string{"", "debezium"}
	routings = []string{"none", "topic_tables", "table_field", "table_header", "debezium_template", "regex"}
	evolves  = []bool{false, true}
	deletes  = []string{"none", "op_d", "field"}
	alos     = []bool{false, true}
)

// combo is one point of the matrix.
type combo struct {
	format, envelope, routing string
	evolve                    bool
	// deletes: none, op_d (Debezium op d + tombstones) or field
	// (records.delete.field).
	deletes string
	alo     bool
}

func (c combo) String() string {
	env := c.envelope
	if env == "" {
		env = "none"
	}
	evo, del := "off", c.deletes
	if c.evolve {
		evo = "add_columns"
	}
	g := "eos"
	if c.alo {
		g = "alo"
	}
	return fmt.Sprintf("%s-env_%s-route_%s-evo_%s-del_%s-%s", c.format, env, c.routing, evo, del, g)
}

// debeziumEvents reports whether c's records are Debezium change events.
func (c combo) debeziumEvents() bool {
	return c.format == "debezium" || (c.envelope == "debezium" && registry(c.format))
}

func registry(format string) bool {
	return format == "avro" || format == "protobuf" || format == "json_schema"
}

// applicable reports whether c means something: op d deletes need
// Debezium change events (other records carry no op; there is no key to
// set, so nothing to refuse).
func (c combo) applicable() bool { return c.deletes != "op_d" || c.debeziumEvents() }

// all is the full product of the dimensions, the applicable points.
func all() []combo {
	var out []combo
	for _, f := range formats {
		for _, e := range envs {
			for _, r := range routings {
				for _, ev := range evolves {
					for _, d := range deletes {
						for _, a := range alos {
							if c := (combo{f, e, r, ev, d, a}); c.applicable() {
								out = append(out, c)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// refusal is the keys config.Load must name when it refuses c, one
// []string per conflict; nil: c is supported.
func (c combo) refusal() [][]string {
	var r [][]string
	if c.envelope != "" && !registry(c.format) {
		r = append(r, []string{"records.envelope", "records.format"})
	}
	if c.format == "csv" && c.evolve {
		r = append(r, []string{"records.schema_evolution", "records.format"})
	}
	if c.deletes == "field" && c.format != "json" {
		r = append(r, []string{"records.format", "records.delete.field"})
	}
	if c.format == "csv" && c.routing == "table_field" {
		r = append(r, []string{"records.format", "routing.table_field"})
	}
	if c.routing == "debezium_template" && !c.debeziumEvents() && (c.envelope == "" || registry(c.format)) {
		r = append(r, []string{"records.format", "routing.debezium_template"})
	}
	return r
}

// yaml is c's job config: job, doris and metrics lines come from base;
// kafka (with brokers), routing and records from c.
func (c combo) yaml(base, brokers string, topics []string) string {
	var b strings.Builder
	b.WriteString(base)
	kafka := "kafka: {brokers: [" + brokers + "], group: " + strings.ReplaceAll(topics[0], ".", "-") + ", start: earliest, "
	rec := []string{"format: " + c.format}
	if c.envelope != "" {
		rec = append(rec, "envelope: "+c.envelope)
	}
	if registry(c.format) {
		rec = append(rec, "schema_registry: {urls: [REGISTRY]}")
	}
	if c.evolve {
		rec = append(rec, "schema_evolution: add_columns")
	}
	if c.deletes == "field" {
		rec = append(rec, "delete: {field: deleted, value: \"true\"}")
	}
	fmt.Fprintf(&b, "records: {%s}\n", strings.Join(rec, ", "))
	g := "exactly-once"
	if c.alo {
		g = "at-least-once"
	}
	fmt.Fprintf(&b, "delivery: {guarantee: %s, checkpoint_interval: 50m, checkpoint_max_rows: 3}\n", g)
	switch c.routing {
	case "none":
		fmt.Fprintf(&b, "%stopic: %s}\n", kafka, topics[0])
	case "topic_tables", "regex":
		if c.routing == "regex" {
			fmt.Fprintf(&b, "%stopic_regex: '%s'}\n", kafka, strings.ReplaceAll(strings.TrimSuffix(topics[0], "a"), ".", "\\.")+".*")
		} else {
			fmt.Fprintf(&b, "%stopics: [%s]}\n", kafka, strings.Join(topics, ", "))
		}
		fmt.Fprintf(&b, "routing: {topic_tables: {%s: shop_a, %s: shop_b}}\n", topics[0], topics[1])
	case "table_field":
		fmt.Fprintf(&b, "%stopic: %s}\nrouting: {table_field: tbl}\n", kafka, topics[0])
	case "table_header":
		fmt.Fprintf(&b, "%stopic: %s}\nrouting: {table_header: tbl}\n", kafka, topics[0])
	case "debezium_template":
		fmt.Fprintf(&b, "%stopics: [%s]}\nrouting: {debezium_template: \"{db}_{table}\"}\n", kafka, strings.Join(topics, ", "))
	}
	return b.String()
}

// loadYAML loads y as run would.
func loadYAML(t *testing.T, dir, y string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
}

// refusalBase is a complete config but for records, delivery, kafka
// topics and routing.
const refusalBase = `job: {name: m, data_dir: DIR}
doris: {fe: [http://127.0.0.1:1], mysql: 127.0.0.1:1, user: root, database: db, table: shop_a}
metrics: {listen: ""}
`

// Every point of the full product loads or is refused at config load,
// naming the keys of each conflict, exactly as refusal() says: the
// refusals of the matrix are asserted for all 700-odd points (config
// loads only; TestMatrixRuns loads data for a pairwise subset of the
// supported ones).
func TestMatrixRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	supported := 0
	for _, c := range all() {
		y := strings.NewReplacer("DIR", dir, "REGISTRY", "http://127.0.0.1:1").Replace(
			c.yaml(refusalBase, "127.0.0.1:1", []string{"m.src.a", "m.src.b"}))
		_, err := loadYAML(t, dir, y)
		want := c.refusal()
		if want == nil {
			if err != nil {
				t.Errorf("%s: refused, want supported: %v", c, err)
			}
			t.Logf("%s: supported", c)
			supported++
			continue
		}
		t.Logf("%s: refused: %v", c, err)
		if err == nil {
			t.Errorf("%s: accepted, want refused naming %v", c, want)
			continue
		}
		var ce *config.ConflictError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *config.ConflictError", c, err)
		}
		for _, keys := range want {
			for _, k := range keys {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("%s: %q does not name %s", c, err, k)
				}
			}
		}
	}
	t.Logf("%d points: %d supported, %d refused", len(all()), supported, len(all())-supported)
}

// pairwise returns a subset of cs covering every pair of dimension
// values that some point of cs has (greedy; deterministic), with must
// first.
func pairwise(cs []combo, must ...combo) []combo {
	dims := func(c combo) []string {
		return []string{"f=" + c.format, "e=" + c.envelope, "r=" + c.routing, fmt.Sprint("v=", c.evolve), "d=" + c.deletes, fmt.Sprint("a=", c.alo)}
	}
	pairs := func(c combo) []string {
		d := dims(c)
		var out []string
		for i := range d {
			for j := i + 1; j < len(d); j++ {
				out = append(out, d[i]+"&"+d[j])
			}
		}
		return out
	}
	left := map[string]bool{}
	for _, c := range cs {
		for _, p := range pairs(c) {
			left[p] = true
		}
	}
	var out []combo
	take := func(c combo) {
		out = append(out, c)
		for _, p := range pairs(c) {
			delete(left, p)
		}
	}
	for _, c := range must {
		take(c)
	}
	for len(left) > 0 {
		best, bestN := -1, 0
		for i, c := range cs {
			n := 0
			for _, p := range pairs(c) {
				if left[p] {
					n++
				}
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
		take(cs[best])
	}
	return out
}

// supported returns the points of the full product config.Load accepts.
func supported() []combo {
	var out []combo
	for _, c := range all() {
		if c.refusal() == nil {
			out = append(out, c)
		}
	}
	return out
}

// doneWhen is the issue's own case: two Avro Debezium topics routed by
// routing.debezium_template with add_columns, op d deletes and
// tombstones, exactly once.
var doneWhen = combo{format: "avro", envelope: "debezium", routing: "debezium_template", evolve: true, deletes: "op_d"}

func TestPairwiseCovers(t *testing.T) {
	t.Parallel()
	ps := pairwise(supported(), doneWhen)
	if !slices.Contains(ps, doneWhen) {
		t.Fatal("the issue's case is not run")
	}
	t.Logf("pairwise: %d of %d supported points", len(ps), len(supported()))
}
