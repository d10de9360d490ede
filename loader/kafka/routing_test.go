package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func routeRec(topic, value string, headers ...kgo.RecordHeader) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: 1, Offset: 7, Value: []byte(value), Headers: headers}
}

// Each rule on its own: the table it names, and falling through when it
// names none (to routing.default_table, else unrouted).
func TestRoutingRules(t *testing.T) {
	t.Parallel()
	dbz := `{"before":null,"after":{"id":1},"op":"c","source":{"db":"inventory","table":"customers"}}`
	dbzSchema := `{"schema":{},"payload":{"op":"c","after":{"id":1},"source":{"db":"inv","table":"order-lines"}}}`
	cases := []struct {
		name string
		ro   Routing
		r    *kgo.Record
		want string // "" = unrouted
	}{
		{"topic map", Routing{TopicTables: map[string]string{"a": "ta", "b": "db2.tb"}}, routeRec("b", `{}`), "db2.tb"},
		{"topic map miss", Routing{TopicTables: map[string]string{"a": "ta"}}, routeRec("b", `{}`), ""},
		{"field", Routing{TableField: "kind"}, routeRec("t", `{"kind":"payments","id":1}`), "payments"},
		{"field qualified", Routing{TableField: "kind"}, routeRec("t", `{"kind":"db.payments"}`), "db.payments"},
		{"field not a string", Routing{TableField: "kind", DefaultTable: "dflt"}, routeRec("t", `{"kind":3}`), "dflt"},
		{"field nested only", Routing{TableField: "kind"}, routeRec("t", `{"x":{"kind":"a"}}`), ""},
		{"field of non-JSON", Routing{TableField: "kind", DefaultTable: "dflt"}, routeRec("t", `a,b`), "dflt"},
		{"header", Routing{TableHeader: "table"}, routeRec("t", `x`, kgo.RecordHeader{Key: "table", Value: []byte("h1")}), "h1"},
		{"header missing", Routing{TableHeader: "table"}, routeRec("t", `x`, kgo.RecordHeader{Key: "other", Value: []byte("h1")}), ""},
		{"debezium", Routing{DebeziumTemplate: "{db}_{table}"}, routeRec("t", dbz), "inventory_customers"},
		{"debezium schema envelope sanitised", Routing{DebeziumTemplate: "{db}_{table}"}, routeRec("t", dbzSchema), "inv_order-lines"},
		{"debezium table only", Routing{DebeziumTemplate: "cdc_{table}"}, routeRec("t", dbz), "cdc_customers"},
		{"debezium without source", Routing{DebeziumTemplate: "{table}", DefaultTable: "dflt"}, routeRec("t", `{"op":"c"}`), "dflt"},
		{"default", Routing{DefaultTable: "orders"}, routeRec("t", `{}`), "orders"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.ro.route(c.r, c.r.Value)
			if c.want == "" {
				if !errors.Is(err, ErrUnrouted) {
					t.Fatalf("route = %q, %v; want ErrUnrouted", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("route = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// The first rule that names a table wins, in the documented order: topic
// map, field, header, Debezium source, default.
func TestRoutingFirstMatchWins(t *testing.T) {
	t.Parallel()
	all := Routing{TopicTables: map[string]string{"mapped": "by_topic"}, TableField: "kind", TableHeader: "table",
		DebeziumTemplate: "{db}_{table}", DefaultTable: "by_default"}
	hdr := kgo.RecordHeader{Key: "table", Value: []byte("by_header")}
	value := `{"kind":"by_field","op":"c","source":{"db":"d","table":"by_source"}}`
	noField := `{"op":"c","source":{"db":"d","table":"by_source"}}`
	for _, c := range []struct {
		r    *kgo.Record
		want string
	}{
		{routeRec("mapped", value, hdr), "by_topic"},
		{routeRec("other", value, hdr), "by_field"},
		{routeRec("other", noField, hdr), "by_header"},
		{routeRec("other", noField), "d_by_source"},
		{routeRec("other", `{}`), "by_default"},
	} {
		if got, err := all.route(c.r, c.r.Value); err != nil || got != c.want {
			t.Errorf("route(%s %s) = %q, %v; want %q", c.r.Topic, c.r.Value, got, err, c.want)
		}
	}
}

// A routed name Doris cannot hold is a record error naming the rule; a
// sanitised Debezium name follows Doris's table-name rule
// (FeNameFormat.TABLE_NAME_REGEX) and one too long is refused.
func TestRoutingRefusesBadNames(t *testing.T) {
	t.Parallel()
	if _, err := (&Routing{TableField: "kind"}).route(valueRec(routeRec("t", `{"kind":"drop table x"}`))); err == nil ||
		errors.Is(err, ErrUnrouted) || !strings.Contains(err.Error(), "routing.table_field") {
		t.Fatalf("bad field table: %v", err)
	}
	if _, err := (&Routing{TableHeader: "h"}).route(valueRec(routeRec("t", ``, kgo.RecordHeader{Key: "h", Value: []byte("1abc")}))); err == nil ||
		!strings.Contains(err.Error(), "must start with a letter") {
		t.Fatalf("bad header table: %v", err)
	}
	long := strings.Repeat("x", 70)
	v := fmt.Sprintf(`{"op":"c","source":{"db":"d","table":%q}}`, long)
	if _, err := (&Routing{DebeziumTemplate: "{table}"}).route(valueRec(routeRec("t", v))); err == nil ||
		!strings.Contains(err.Error(), "table_name_length_limit") {
		t.Fatalf("long Debezium table: %v", err)
	}
	for in, want := range map[string]string{"a b.c": "a_b_c", "1st": "t_1st", "Ä": "t___", "ok-name_2": "ok-name_2"} {
		if got, err := SanitizeTableName(in); err != nil || got != want {
			t.Errorf("SanitizeTableName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	cfg := Config{Brokers: []string{"b:1"}, Topic: "t", Routing: Routing{DebeziumTemplate: "{db}",
		TopicTables: map[string]string{"t": "bad name"}}}
	cfg.applyDefaults()
	err := cfg.validate()
	if err == nil || !strings.Contains(err.Error(), "routing.debezium_template") || !strings.Contains(err.Error(), "routing.topic_tables.t") {
		t.Fatalf("validate = %v, want both routing keys named", err)
	}
}

// valueRec is r and its value, route's arguments for a JSON record.
func valueRec(r *kgo.Record) (*kgo.Record, []byte) { return r, r.Value }
