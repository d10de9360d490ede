package chaos

import (
	"context"
	be "encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// go test ./chaos -run TestAvroCDCKill9 -chaos.cdc-kills=6 -timeout 10m
var flagCDCKills = flag.Int("chaos.cdc-kills", 0, "SIGKILLs of TestAvroCDCKill9 (0 skips it: a long run, outside CI)")

// cdcEnvelope is Debezium's Avro value schema of table shop.<table>.
func cdcEnvelope(table, fields string) string {
	return `{"type":"record","name":"Envelope","namespace":"srv.shop.` + table + `","fields":[` +
		`{"name":"before","type":["null",{"type":"record","name":"Value","fields":[` + fields + `]}],"default":null},` +
		`{"name":"after","type":["null","Value"],"default":null},` +
		`{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[` +
		`{"name":"db","type":"string"},{"name":"table","type":"string"}]}},{"name":"op","type":"string"}]}`
}

// cdcChange is one change of a shop row: table 0 customers (id, name,
// email from the schema change on), 1 orders (id, amount).
type cdcChange struct {
	table  int
	op     string
	id     int64
	name   string
	email  string
	amount int64
	v2     bool
}

// Issue 28's "done when": two source tables as Debezium Avro topics with
// routing.debezium_template and schema_evolution: add_columns, loaded by
// real `doris-sink run` processes SIGKILLed -chaos.cdc-kills times (each
// after the job made progress, at a random moment), then run to the end:
// every key's final row right, deletes removed, the new column's values
// right, `doris-sink verify` exit 0.
func TestAvroCDCKill9(t *testing.T) {
	kills := *flagCDCKills
	if kills == 0 {
		t.Skip("a long run: -chaos.cdc-kills=6")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cl, err := NewCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	topics := []string{"srv.shop.customers", "srv.shop.orders"}
	tables := []string{"shop_customers", "shop_orders"}
	const unique = ` UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
	for _, ddl := range []string{"CREATE TABLE shop_customers (id BIGINT, name VARCHAR(64))" + unique,
		"CREATE TABLE shop_orders (id BIGINT, amount BIGINT)" + unique} {
		if err := cl.Doris.CreateTable(Database, ddl); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(cl.Brokers()))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if res, err := kadm.NewClient(kc).CreateTopics(ctx, 3, 1, nil, topics...); err != nil || res.Error() != nil {
		t.Fatalf("create topics: %v %v", err, res.Error())
	}
	ids := make([]int, 3)
	for i, s := range []struct{ subject, schema string }{
		{topics[0] + "-value", cdcEnvelope("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"}`)},
		{topics[0] + "-value", cdcEnvelope("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}`)},
		{topics[1] + "-value", cdcEnvelope("orders", `{"name":"id","type":"long"},{"name":"amount","type":"long"}`)},
	} {
		if ids[i], err = reg.Registry().Register(s.subject, sr.Schema{Schema: s.schema}); err != nil {
			t.Fatal(err)
		}
	}
	encode := func(c cdcChange) []byte {
		id := ids[2]
		var img []byte
		img = be.AppendVarint(img, c.id)
		if c.table == 0 {
			id = ids[0]
			img = appendAvroString(img, c.name)
			if c.v2 {
				id = ids[1]
				img = appendAvroString(be.AppendVarint(img, 1), c.email)
			}
		} else {
			img = be.AppendVarint(img, c.amount)
		}
		b := appendHeader(nil, id)
		if c.op == "d" {
			b = be.AppendVarint(append(be.AppendVarint(b, 1), img...), 0)
		} else {
			b = append(be.AppendVarint(be.AppendVarint(b, 0), 1), img...)
		}
		b = appendAvroString(appendAvroString(b, "shop"), strings.TrimPrefix(tables[c.table], "shop_"))
		return appendAvroString(b, c.op)
	}

	// The history: per round, new customers and orders, updates and
	// deletes of earlier ones; customers carry email from round kills/2 on.
	rng := rand.New(rand.NewPCG(28, 6))
	want := []map[int64]string{{}, {}}
	var produced int64
	next := int64(1)
	round := func(r int) {
		t.Helper()
		var rs []*kgo.Record
		add := func(c cdcChange) {
			key := fmt.Appendf(nil, `{"id":%d}`, c.id)
			rs = append(rs, &kgo.Record{Topic: topics[c.table], Key: key, Value: encode(c)})
			if c.op == "d" {
				rs = append(rs, &kgo.Record{Topic: topics[c.table], Key: key}) // Debezium's tombstone
				delete(want[c.table], c.id)
				return
			}
			if c.table == 0 {
				email := "<nil>"
				if c.v2 {
					email = c.email
				}
				want[0][c.id] = fmt.Sprintf("%d %s %s", c.id, c.name, email)
			} else {
				want[1][c.id] = fmt.Sprintf("%d %d", c.id, c.amount)
			}
		}
		v2 := r >= kills/2
		for range 40 {
			id := next
			next++
			add(cdcChange{table: 0, op: "c", id: id, name: fmt.Sprintf("c%d", id), email: fmt.Sprintf("c%d@x", id), v2: v2})
			add(cdcChange{table: 1, op: "c", id: id, amount: id})
			old := 1 + rng.Int64N(id)
			switch rng.IntN(4) {
			case 0:
				add(cdcChange{table: 0, op: "u", id: old, name: fmt.Sprintf("c%d-r%d", old, r), email: fmt.Sprintf("c%d@r%d", old, r), v2: v2})
			case 1:
				add(cdcChange{table: 1, op: "u", id: old, amount: old*100 + int64(r)})
			case 2:
				if _, ok := want[1][old]; ok {
					add(cdcChange{table: 1, op: "d", id: old, amount: 0})
				}
			case 3:
				if _, ok := want[0][old]; ok {
					add(cdcChange{table: 0, op: "d", id: old, name: "gone", v2: v2})
				}
			}
		}
		if err := cl.Produce(ctx, rs...); err != nil {
			t.Fatal(err)
		}
		produced += int64(len(rs))
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "cdc.yaml")
	yaml := fmt.Sprintf(`job: {name: cdc-avro, data_dir: %s}
kafka: {brokers: [%s], topics: [%s], group: cdc-avro, start: earliest}
doris: {fe: [%s], mysql: %s, user: root, database: %s, table: shop_customers, properties: {max_filter_ratio: "0"}}
records: {format: avro, envelope: debezium, schema_evolution: add_columns, schema_registry: {urls: [%s]}}
routing: {debezium_template: "{db}_{table}"}
delivery: {checkpoint_interval: 300ms, checkpoint_max_rows: 29}
metrics: {listen: ""}
log: {format: json, level: info}
`, filepath.Join(dir, "data"), cl.Brokers(), strings.Join(topics, ", "), cl.Doris.FEURL(), cl.Doris.MySQLAddr(), Database, reg.URL())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for k := range kills {
		round(k)
		p, err := StartProcess(binary, []string{"run", "-c", cfg})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WaitReady(ctx); err != nil {
			t.Fatalf("kill %d: %v\n%s", k+1, err, p.Tail(40))
		}
		from := p.Decided()
		if err := p.waitFor(ctx, func() bool { return p.decided > from }); err != nil {
			t.Fatalf("kill %d: no progress: %v\n%s", k+1, err, p.Tail(40))
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond) // a random moment, not a synchronisation
		p.Kill()
		t.Logf("kill -9 #%d at %d of %d offsets decided", k+1, p.Decided(), produced)
	}
	round(kills)
	p, err := StartProcess(binary, []string{"run", "-c", cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitDecided(ctx, produced); err != nil {
		t.Fatalf("final run: %v\n%s", err, p.Tail(40))
	}
	p.Signal(os.Interrupt)
	if code, err := p.Wait(ctx); err != nil || code != 0 {
		t.Fatalf("final run exit %d, %v\n%s", code, err, p.Tail(40))
	}
	t.Logf("%d records (%d customers, %d orders at the end) through %d kill -9 in %s", produced, len(want[0]), len(want[1]), kills, time.Since(start).Round(time.Millisecond))

	for i, tbl := range tables {
		sch, err := cl.Doris.Schema(Database, tbl)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := cl.Doris.Rows(Database, tbl)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		for _, r := range rows {
			parts := make([]string, len(r))
			for j := range r {
				parts[j] = fmt.Sprint(r[j])
			}
			id, _ := r[0].(int64)
			if _, dup := got[id]; dup {
				t.Errorf("%s: key %d twice", tbl, id)
			}
			got[id] = strings.Join(parts, " ")
		}
		bad := 0
		for id, w := range want[i] {
			if got[id] != w {
				bad++
				if bad <= 5 {
					t.Errorf("%s key %d: %q, want %q", tbl, id, got[id], w)
				}
			}
		}
		if len(got) != len(want[i]) || bad > 0 {
			t.Errorf("%s: %d rows, want %d; %d wrong (columns %v)", tbl, len(got), len(want[i]), bad, sch.Columns)
		}
	}
	v, err := StartProcess(binary, []string{"verify", "-c", cfg})
	if err != nil {
		t.Fatal(err)
	}
	if code, err := v.Wait(ctx); err != nil || code != 0 {
		t.Fatalf("verify exit %d, %v\n%s", code, err, v.Tail(60))
	}
	t.Logf("verify exit 0")
}
