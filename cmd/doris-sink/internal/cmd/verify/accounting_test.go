package verify

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// kafkaEnv is a kfake cluster and verify's real Kafka reader on it.
type kafkaEnv struct {
	t       *testing.T
	brokers []string
	cluster *kfake.Cluster
	admin   *kafkaAdmin
}

func newKafkaEnv(t *testing.T) *kafkaEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	k := &kafkaEnv{t: t, brokers: c.ListenAddrs(), cluster: c}
	k.admin, err = newKafka(&config.Config{Kafka: config.Kafka{Brokers: k.brokers}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.admin.Close)
	return k
}

// topic creates a one-partition topic with configs.
func (k *kafkaEnv) topic(name string, configs map[string]*string) {
	k.t.Helper()
	if _, err := k.admin.adm.CreateTopic(context.Background(), 1, 1, configs, name); err != nil {
		k.t.Fatal(err)
	}
}

// produce writes values (nil: a tombstone), one batch each.
func (k *kafkaEnv) produce(topic string, keys []string, values [][]byte) {
	k.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.brokers...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		k.t.Fatal(err)
	}
	defer cl.Close()
	for i, v := range values {
		r := &kgo.Record{Value: v}
		if keys != nil {
			r.Key = []byte(keys[i])
		}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			k.t.Fatal(err)
		}
	}
}

// txn writes values in one producer transaction, committed or aborted;
// each transaction ends with a control record (a marker offset).
func (k *kafkaEnv) txn(topic string, commit bool, values ...string) {
	k.t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.brokers...), kgo.DefaultProduceTopic(topic), kgo.TransactionalID("verify-test-"+topic))
	if err != nil {
		k.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		k.t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			k.t.Fatal(err)
		}
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		k.t.Fatal(err)
	}
}

// loaded is the ledger of one committed checkpoint covering [0, end) of
// partition 0 of topic with rows rows and dlq dead letters.
func loaded(topic string, end, rows, dlq int64) []ledger.Entry {
	rg := []byte(fmt.Sprintf(`{"start":null,"end":{"topic":%q,"offsets":{"0":%d}}}`, topic, end))
	return []ledger.Entry{
		{Event: ledger.EventDecided, Checkpoint: 1, Label: "job:demo.t:0:1", TxnID: 101, Ranges: rg,
			RowsTotal: rows, RowsLoaded: rows, DeadLettered: dlq, Bytes: 10 * rows},
		{Event: ledger.EventCommitted, Checkpoint: 1, Label: "job:demo.t:0:1", TxnID: 101, Ranges: rg, State: "VISIBLE",
			RowsTotal: rows, RowsLoaded: rows, DeadLettered: dlq, Bytes: 10 * rows},
	}
}

// verdict reconciles es against k (Doris not checked) and returns the
// exit code and the checkpoint's accounting.
func (k *kafkaEnv) verdict(es []ledger.Entry, skipsTombstones bool) (int, *Accounting, *Report) {
	k.t.Helper()
	in := Input{Job: "job", DB: "demo", Table: "t", Entries: es, Kafka: k.admin, SkipsTombstones: skipsTombstones}
	rep := Reconcile(context.Background(), in)
	return cmdutil.ExitCode(rep.Err()), rep.Checkpoints[0].Accounted, rep
}

// Issue 11: verify counted one row per offset and failed correct loads
// ("the load has 4 rows for 6 offsets", exit 1). Each kind of offset that
// is not a row is now accounted for, and a real shortfall or excess is
// still a gap (exit 5): both directions per case.
func TestVerifyAccountsForOffsetsThatAreNotRows(t *testing.T) {
	t.Parallel()
	k := newKafkaEnv(t)
	six := [][]byte{[]byte(`{"id":1}`), []byte(`{"id":2}`), []byte(`x`), []byte(`{"id":3}`), []byte(`y`), []byte(`{"id":4}`)}

	t.Run("dead letters", func(t *testing.T) {
		k.topic("dlq", nil)
		k.produce("dlq", nil, six)
		code, acc, rep := k.verdict(loaded("dlq", 6, 4, 2), false)
		if code != cmdutil.ExitOK || acc == nil || acc.DeadLettered != 2 || acc.FromKafka {
			t.Errorf("4 rows + 2 dead letters for 6 offsets: exit %d, accounted %+v, findings %v", code, acc, rep.Findings)
		}
		for _, c := range []struct{ rows, dlq int64 }{{3, 2}, {5, 2}, {4, 3}} {
			if code, _, rep := k.verdict(loaded("dlq", 6, c.rows, c.dlq), false); code != cmdutil.ExitGaps {
				t.Errorf("%d rows + %d dead letters for 6 records: exit %d, want %d; %v", c.rows, c.dlq, code, cmdutil.ExitGaps, rep.Findings)
			}
		}
	})

	t.Run("tombstones", func(t *testing.T) {
		k.topic("cdc", nil)
		k.produce("cdc", nil, [][]byte{[]byte(`{"op":"c"}`), nil, []byte(`{"op":"u"}`), []byte(`{"op":"d"}`), nil, []byte(`{"op":"c"}`)})
		code, acc, rep := k.verdict(loaded("cdc", 6, 4, 0), true)
		if code != cmdutil.ExitOK || acc == nil || acc.Tombstones != 2 || !acc.FromKafka {
			t.Errorf("debezium, 4 rows for 6 offsets with 2 tombstones: exit %d, accounted %+v, findings %v", code, acc, rep.Findings)
		}
		if code, _, _ := k.verdict(loaded("cdc", 6, 3, 0), true); code != cmdutil.ExitGaps {
			t.Errorf("debezium, 3 rows for 4 records + 2 tombstones: exit %d, want %d", code, cmdutil.ExitGaps)
		}
		// json and csv do not skip tombstones (they fail or dead-letter them).
		if code, _, _ := k.verdict(loaded("cdc", 6, 4, 0), false); code != cmdutil.ExitGaps {
			t.Errorf("json, 4 rows for 6 records: exit %d, want %d", code, cmdutil.ExitGaps)
		}
	})

	t.Run("transaction markers and aborted records", func(t *testing.T) {
		k.topic("txn", nil)
		k.txn("txn", true, "a", "b")  // offsets 0, 1, marker 2
		k.txn("txn", false, "x", "y") // aborted 3, 4, marker 5
		k.txn("txn", true, "c", "d")  // 6, 7, marker 8
		code, acc, rep := k.verdict(loaded("txn", 9, 4, 0), false)
		if code != cmdutil.ExitOK || acc == nil || acc.Control != 3 || acc.Absent != 2 {
			t.Errorf("4 rows for 9 offsets (3 markers, 2 aborted): exit %d, accounted %+v, findings %v", code, acc, rep.Findings)
		}
		for _, rows := range []int64{3, 5} {
			if code, _, rep := k.verdict(loaded("txn", 9, rows, 0), false); code != cmdutil.ExitGaps {
				t.Errorf("%d rows for 4 committed records: exit %d, want %d; %v", rows, code, cmdutil.ExitGaps, rep.Findings)
			}
		}
	})

	t.Run("compacted offsets", func(t *testing.T) {
		compact := "compact"
		k.topic("state", map[string]*string{"cleanup.policy": &compact})
		k.produce("state", []string{"a", "a", "b", "b", "c"}, [][]byte{[]byte("1"), []byte("2"), []byte("3"), []byte("4"), []byte("5")})
		k.cluster.Compact() // offsets 0 (a=1) and 2 (b=3) are superseded
		code, acc, rep := k.verdict(loaded("state", 5, 3, 0), false)
		if code != cmdutil.ExitOK || acc == nil || acc.Absent != 2 {
			t.Errorf("3 rows for 5 offsets, 2 compacted away: exit %d, accounted %+v, findings %v", code, acc, rep.Findings)
		}
		if code, _, _ := k.verdict(loaded("state", 5, 2, 0), false); code != cmdutil.ExitGaps {
			t.Errorf("2 rows for 3 remaining records: exit %d, want %d", code, cmdutil.ExitGaps)
		}
	})
}

// Records deleted by retention cannot be counted: unverifiable, never a
// silent pass or a false gap.
func TestVerifyRangeDeletedByRetention(t *testing.T) {
	t.Parallel()
	k := newKafkaEnv(t)
	k.topic("ret", nil)
	k.produce("ret", nil, [][]byte{[]byte("1"), []byte("2"), []byte("3"), []byte("4")})
	if _, err := k.admin.adm.DeleteRecords(context.Background(), kadm.Offsets{"ret": {0: {At: 2}}}); err != nil {
		t.Fatal(err)
	}
	code, acc, rep := k.verdict(loaded("ret", 4, 3, 0), false)
	if code != cmdutil.ExitOK || acc != nil || len(findings(rep, KindUnverifiable)) == 0 {
		t.Errorf("range partly deleted: exit %d, accounted %+v, findings %v; want an unverifiable warning", code, acc, rep.Findings)
	}
}

// Without Kafka a shortfall cannot be told from markers or compaction: a
// warning, not a failure; more rows than offsets is still a gap.
func TestVerifyRowsWithoutKafka(t *testing.T) {
	t.Parallel()
	rep := Reconcile(t.Context(), Input{Job: "job", DB: "demo", Table: "t", Entries: loaded("orders", 6, 4, 0)})
	if err := rep.Err(); err != nil {
		t.Errorf("4 rows for 6 offsets without Kafka: %v, want warnings only: %v", err, rep.Findings)
	}
	rep = Reconcile(t.Context(), Input{Job: "job", DB: "demo", Table: "t", Entries: loaded("orders", 6, 5, 2)})
	if cmdutil.ExitCode(rep.Err()) != cmdutil.ExitGaps {
		t.Errorf("5 rows + 2 dead letters for 6 offsets without Kafka: %v, want a gap", rep.Err())
	}
}
