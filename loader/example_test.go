package loader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// exampleDoris starts an emulated Doris with table demo.orders.
func exampleDoris() (*doristest.Server, *doris.Client) {
	srv, err := doristest.NewServer()
	if err != nil {
		panic(err)
	}
	if err := srv.CreateDatabase("demo"); err != nil {
		panic(err)
	}
	if err := srv.CreateTable("demo", "CREATE TABLE orders (id BIGINT, amount BIGINT) UNIQUE KEY(id) "+
		`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`); err != nil {
		panic(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, User: "root"})
	if err != nil {
		panic(err)
	}
	return srv, client
}

func ExampleLoader() {
	srv, client := exampleDoris()
	defer srv.Close()
	defer client.Close()
	dir, _ := os.MkdirTemp("", "loader-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := checkpoint.OpenFile(dir, checkpoint.Owner{Job: "orders-eos", DB: "demo", Table: "orders", Writer: "0"})
	if err != nil {
		panic(err)
	}
	l, err := loader.New(client, loader.Config{Job: "orders-eos", DB: "demo", Table: "orders", Store: store, LedgerDir: dir})
	if err != nil {
		panic(err)
	}
	// Resolve whatever a previous run left, and learn where to resume.
	pos, err := l.Recover(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("resume from: %q\n", string(pos))
	for i := range 6 {
		if err := l.Write(ctx, fmt.Appendf(nil, `{"id":%d,"amount":%d}`, i, i*10)); err != nil {
			panic(err) // an ErrNeedRecover error: Recover and rewind
		}
		if i%3 == 2 {
			if err := l.Checkpoint(ctx, json.RawMessage(fmt.Sprintf(`{"next":%d}`, i+1))); err != nil {
				panic(err)
			}
		}
	}
	if err := l.Close(ctx); err != nil {
		panic(err)
	}
	rows, _ := srv.Rows("demo", "orders")
	fmt.Println("rows:", len(rows))
	st, _ := checkpoint.ReadFile(dir)
	fmt.Println("decided:", st.Decided.ID, "committed:", st.Decided.Committed, "end:", string(st.Decided.End))
	// Output:
	// resume from: ""
	// rows: 6
	// decided: 2 committed: true end: {"next":6}
}

func ExampleParticipant() {
	srv, client := exampleDoris()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()

	p, err := loader.NewParticipant(client)
	if err != nil {
		panic(err)
	}
	// The coordinator picks a deterministic label per checkpoint.
	tx, err := p.Begin(ctx, "my-app:demo-orders:0:1", loader.Target{DB: "demo", Table: "orders", Format: "json"})
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		if err := tx.Write(fmt.Appendf(nil, `{"id":%d,"amount":1}`, i)); err != nil {
			panic(err)
		}
	}
	c, err := tx.Precommit(ctx)
	if err != nil {
		panic(err)
	}
	// ... the coordinator stores c durably in its checkpoint, then:
	if err := p.Commit(ctx, c); err != nil {
		panic(err)
	}
	// After a restart it would call p.Recover(ctx, storedCommittables).
	if err := p.Recover(ctx, []loader.Committable{c}); err != nil {
		panic(err)
	}
	rows, _ := srv.Rows("demo", "orders")
	fmt.Println("label:", c.Label, "rows:", len(rows))
	// Output:
	// label: my-app:demo-orders:0:1 rows: 3
}

func ExampleLoader_WriteTo() {
	srv, client := exampleDoris()
	defer srv.Close()
	defer client.Close()
	if err := srv.CreateTable("demo", "CREATE TABLE payments (id BIGINT, amount BIGINT) DUPLICATE KEY(id) "+
		"DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "loader-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// The store belongs to the job's main table (Config.Table); it decides
	// the checkpoints of every table the job writes.
	store, err := checkpoint.OpenFile(dir, checkpoint.Owner{Job: "shop", DB: "demo", Table: "orders", Writer: "0"})
	if err != nil {
		panic(err)
	}
	l, err := loader.New(client, loader.Config{Job: "shop", DB: "demo", Table: "orders", Store: store, LedgerDir: dir})
	if err != nil {
		panic(err)
	}
	if _, err := l.Recover(ctx); err != nil {
		panic(err)
	}
	for i := range 4 {
		table := "orders"
		if i%2 == 1 {
			table = "payments"
		}
		if err := l.WriteTo(ctx, table, fmt.Appendf(nil, `{"id":%d,"amount":%d}`, i, i*10)); err != nil {
			panic(err)
		}
	}
	// One decision for both tables: a txn each, committed after it.
	if err := l.Checkpoint(ctx, json.RawMessage(`{"next":4}`)); err != nil {
		panic(err)
	}
	if err := l.Close(ctx); err != nil {
		panic(err)
	}
	st, _ := checkpoint.ReadFile(dir)
	for _, tx := range st.Decided.Txns {
		rows, _ := srv.Rows("demo", tx.Table[len("demo."):])
		fmt.Println(tx.Table, tx.Label, "committed:", tx.Committed, "rows:", len(rows))
	}
	// Output:
	// demo.orders shop:demo-orders:0:1 committed: true rows: 2
	// demo.payments shop:demo-payments:0:1 committed: true rows: 2
}
