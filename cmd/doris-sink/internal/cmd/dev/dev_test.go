package dev

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
)

// TestDevServesDorisAndKafka starts `doris-sink dev` on ephemeral ports,
// waits until every port accepts connections, does a 2PC Stream Load and
// commit (the curl examples, docs/doris-facts.md §1, §3), reads the row back over
// MySQL, produces to an auto-created topic, then cancels.
func TestDevServesDorisAndKafka(t *testing.T) {
	t.Parallel()
	f, out, _ := cmdutil.NewTestFactory(false)
	f.Environ = func() []string { return []string{PasswordEnv + "=pw"} }
	ep := startDev(t, f, "--partitions", "2")
	ctx := t.Context()
	var printed Endpoints
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil || !reflect.DeepEqual(printed, ep) {
		t.Errorf("printed %q (%v), ready %+v", out.String(), err, ep)
	}
	for _, addr := range []string{strings.TrimPrefix(ep.FE, "http://"), strings.TrimPrefix(ep.BE, "http://"), ep.MySQL, ep.Kafka, strings.TrimPrefix(ep.Admin, "http://")} {
		waitPort(t, addr)
	}

	c, err := doris.NewClient(doris.Config{FE: []string{ep.FE}, MySQL: ep.MySQL, User: "root", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.StreamLoad(ctx, doris.LoadRequest{DB: "demo", Table: SampleTable, Label: "demo-1", Format: "json",
		TwoPhaseCommit: true, ReadJSONByLine: true}, strings.NewReader(`{"order_id":1,"status":"new","amount":9.5}`+"\n"))
	if err != nil {
		t.Fatalf("stream load: %v", err)
	}
	if err := c.CommitTxn(ctx, "demo", res.TxnID); err != nil {
		t.Fatalf("commit %d: %v", res.TxnID, err)
	}
	db, err := sql.Open("mysql", "root:pw@tcp("+ep.MySQL+")/demo")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status string
	if err := db.QueryRowContext(ctx, "SELECT status FROM orders WHERE order_id = 1").Scan(&status); err != nil || status != "new" {
		t.Errorf("select: %q, %v", status, err)
	}

	kc, err := kgo.NewClient(kgo.SeedBrokers(ep.Kafka), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("produce: %v", err)
	}
}

// waitPort polls addr until it accepts a TCP connection (each Dial blocks
// until the kernel answers; no sleeps).
func waitPort(t *testing.T, addr string) {
	t.Helper()
	var err error
	for range 100 {
		var c net.Conn
		if c, err = net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("%s never accepted: %v", addr, err)
}

func TestDevParsing(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	var got *Options
	cmd := NewCmdDev(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.FEAddr != "127.0.0.1:8030" || got.BEAddr != "127.0.0.1:8040" || got.MySQLAddr != "127.0.0.1:9030" ||
		got.KafkaAddr != "127.0.0.1:9092" || got.User != "root" || got.Password != "" {
		t.Errorf("defaults %+v", got)
	}
	cmd = NewCmdDev(f, func(context.Context, *Options) error { return nil })
	cmd.SetArgs([]string{"--partitions", "0"})
	if err := cmd.Execute(); err == nil {
		t.Error("--partitions 0 accepted")
	}
}
