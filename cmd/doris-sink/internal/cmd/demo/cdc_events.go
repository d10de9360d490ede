package demo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The CDC round's source database: one Debezium topic carrying the change
// events of three tables of database "shop", routed to shop_<table>.
const (
	cdcTopic  = "shop"
	cdcJob    = "demo-cdc"
	cdcSource = "shop"
)

// cdcColumn is a column of a source table: its name and Connect type.
type cdcColumn struct{ name, typ string }

// cdcTable is a source table and its row schema; v2 is the schema after the
// mid-stream change (nil: it never changes).
type cdcTable struct {
	name   string
	cols   []cdcColumn
	v2     []cdcColumn
	target string // the Doris table {db}_{table} routes to
}

// cdcTables are the source tables; customers gains an email column.
var cdcTables = []cdcTable{
	{name: "customers", cols: []cdcColumn{{"id", "int64"}, {"name", "string"}},
		v2: []cdcColumn{{"id", "int64"}, {"name", "string"}, {"email", "string"}}},
	{name: "orders", cols: []cdcColumn{{"id", "int64"}, {"customer_id", "int64"}, {"amount", "int32"}}},
	{name: "items", cols: []cdcColumn{{"id", "int64"}, {"order_id", "int64"}, {"sku", "string"}, {"qty", "int32"}}},
}

func init() {
	for i := range cdcTables {
		cdcTables[i].target = cdcSource + "_" + cdcTables[i].name
	}
}

// cdcEvent is one change event of a source table row.
type cdcEvent struct {
	table *cdcTable
	v2    bool   // carries the changed schema
	op    string // c, u or d
	id    int64
	row   []string // column values as JSON literals, in the schema's column order
}

// columns returns the schema of e.
func (e cdcEvent) columns() []cdcColumn {
	if e.v2 {
		return e.table.v2
	}
	return e.table.cols
}

// Key is the Debezium record key: the primary key with its Connect schema.
func (e cdcEvent) Key() []byte {
	return fmt.Appendf(nil, `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,`+
		`"name":"%s.%s.Key"},"payload":{"id":%d}}`, cdcSource, e.table.name, e.id)
}

// JSON is the Debezium change event as the JSON converter with schemas
// writes it: the Connect schema of the envelope and the payload with
// before/after, op and source.
func (e cdcEvent) JSON() []byte {
	cols := e.columns()
	fields := make([]string, len(cols))
	vals := make([]string, len(cols))
	for i, c := range cols {
		opt := "true"
		if c.name == "id" {
			opt = "false"
		}
		fields[i] = fmt.Sprintf(`{"type":%q,"optional":%s,"field":%q}`, c.typ, opt, c.name)
		vals[i] = fmt.Sprintf("%q:%s", c.name, e.row[i])
	}
	name := cdcSource + "." + e.table.name
	img := `{"type":"struct","fields":[` + strings.Join(fields, ",") + `],"optional":true,"name":"` + name + `.Value"`
	schema := `{"type":"struct","fields":[` + img + `,"field":"before"},` + img + `,"field":"after"},` +
		`{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"` + name + `.Envelope"}`
	image := "{" + strings.Join(vals, ",") + "}"
	before, after := "null", image
	if e.op == "d" {
		before, after = image, "null"
	}
	return []byte(`{"schema":` + schema + `,"payload":{"before":` + before + `,"after":` + after + `,"op":"` + e.op +
		`","source":{"db":"` + cdcSource + `","table":"` + e.table.name + `"}}}`)
}

// cdcEvents is the change stream of n customers, n orders and 2n items,
// interleaved as a database's log would have them: creates, updates of
// every third order, deletes of every fifth item and every seventh
// customer; from the middle on, customers events carry the email column
// (the schema change), including updates that fill it for earlier rows.
func cdcEvents(n int) []cdcEvent {
	cust, ord, item := &cdcTables[0], &cdcTables[1], &cdcTables[2]
	var evs []cdcEvent
	q := strconv.Quote
	for i := int64(1); i <= int64(n); i++ {
		v2 := i > int64(n)/2
		name := q(fmt.Sprintf("customer-%d", i))
		if v2 {
			evs = append(evs, cdcEvent{table: cust, v2: true, op: "c", id: i, row: []string{itoa(i), name, q(fmt.Sprintf("c%d@shop.example", i))}})
			if j := i - int64(n)/2; j >= 1 && j%2 == 1 && j%7 != 0 { // an older (not deleted) customer gets an email
				evs = append(evs, cdcEvent{table: cust, v2: true, op: "u", id: j,
					row: []string{itoa(j), q(fmt.Sprintf("customer-%d", j)), q(fmt.Sprintf("c%d@shop.example", j))}})
			}
		} else {
			evs = append(evs, cdcEvent{table: cust, op: "c", id: i, row: []string{itoa(i), name}})
		}
		evs = append(evs, cdcEvent{table: ord, op: "c", id: i, row: []string{itoa(i), itoa(i), itoa(10 * i)}})
		for k := int64(0); k < 2; k++ {
			id := 2*i - 1 + k
			evs = append(evs, cdcEvent{table: item, op: "c", id: id, row: []string{itoa(id), itoa(i), q(fmt.Sprintf("sku-%d", id)), itoa(1 + k)}})
		}
		if i%3 == 0 {
			evs = append(evs, cdcEvent{table: ord, op: "u", id: i, row: []string{itoa(i), itoa(i), itoa(10*i + 5)}})
		}
		if i%5 == 0 {
			evs = append(evs, cdcEvent{table: item, op: "d", id: 2 * i, row: []string{itoa(2 * i), itoa(i), q(fmt.Sprintf("sku-%d", 2*i)), "2"}})
		}
		if i%7 == 0 {
			last := evs[slices.IndexFunc(evs, func(e cdcEvent) bool { return e.table == cust && e.id == i })]
			evs = append(evs, cdcEvent{table: cust, v2: last.v2, op: "d", id: i, row: last.row})
		}
	}
	return evs
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// cdcExpected is the state each target table must hold after evs: per
// table, per id, the row as the demo reads it back (columns of the final
// schema, NULL as "", strings unquoted), and the number of events per table.
func cdcExpected(evs []cdcEvent) (rows map[string]map[int64][]string, events map[string]int) {
	rows, events = map[string]map[int64][]string{}, map[string]int{}
	for _, t := range cdcTables {
		rows[t.target] = map[int64][]string{}
	}
	for _, e := range evs {
		events[e.table.target]++
		m := rows[e.table.target]
		if e.op == "d" {
			delete(m, e.id)
			continue
		}
		final := e.table.cols
		if e.table.v2 != nil {
			final = e.table.v2
		}
		r := make([]string, len(final))
		for i, v := range e.row {
			if s, err := strconv.Unquote(v); err == nil {
				v = s
			}
			r[i] = v
		}
		m[e.id] = r
	}
	return rows, events
}

// finalColumns names the columns of t after the schema change.
func (t *cdcTable) finalColumns() []string {
	cols := t.cols
	if t.v2 != nil {
		cols = t.v2
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}
