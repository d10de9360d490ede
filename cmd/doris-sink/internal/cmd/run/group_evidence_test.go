package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyAs runs `doris-sink verify` with the config of member name (its
// job.data_dir), or, for a name without a member config, a config whose
// job.data_dir is an empty directory.
func (e *groupEnv) verifyAs(name string) *verify.Report {
	e.t.Helper()
	path := filepath.Join(e.dir, name+".yaml")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		b, err := os.ReadFile(filepath.Join(e.dir, "m1.yaml"))
		if err != nil {
			e.t.Fatal(err)
		}
		empty := e.t.TempDir()
		y := strings.Replace(string(b), filepath.Join(e.dir, "data-m1"), empty, 1)
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	cfg, err := config.Load(config.LoadOptions{File: path, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		e.t.Fatal(err)
	}
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := verify.VerifyConfig(ctx, f, cfg, false, false)
	if err != nil {
		e.t.Fatalf("verify -c %s: %v", name, err)
	}
	return rep
}

// expireEarlyEvidence sets retention.bytes on the job's evidence topic
// to about the size of its last third of records and applies retention
// (kfake drops whole batches from the start), checking that the log start
// moved and that every slot still has a record left.
func (e *groupEnv) expireEarlyEvidence() {
	e.t.Helper()
	ctx := e.t.Context()
	opts := []kgo.Opt{kgo.SeedBrokers(e.kc.ListenAddrs()...)}
	el, err := coordlog.ReadEvidence(ctx, groupJob, opts, coordlog.EvidenceReadOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var keep int
	for _, r := range el.Records[len(el.Records)*2/3:] {
		b, err := json.Marshal(r)
		if err != nil {
			e.t.Fatal(err)
		}
		keep += len(b)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	v := strconv.Itoa(keep)
	rs, err := kadm.NewClient(cl).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.bytes", Value: &v}},
		el.Topic)
	if err == nil {
		for _, r := range rs {
			err = errors.Join(err, r.Err)
		}
	}
	if err != nil {
		e.t.Fatal(err)
	}
	e.kc.ApplyRetention()
	after, err := coordlog.ReadEvidence(ctx, groupJob, opts, coordlog.EvidenceReadOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if after.LogStart == 0 || len(after.RecordsOf("0")) == 0 || len(after.RecordsOf("1")) == 0 {
		e.t.Fatalf("retention.bytes %s: log start %d, %d/%d records of slots 0/1 left: want early records gone and both slots left",
			v, after.LogStart, len(after.RecordsOf("0")), len(after.RecordsOf("1")))
	}
}

// describe renders a report's findings and table count for a failure.
func describe(rep *verify.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "\n  %s", f)
	}
	if tc := rep.TableCount; tc != nil {
		fmt.Fprintf(&b, "\n  table count %s: %s", tc.Status, tc.Note)
	}
	for _, s := range rep.Sources {
		fmt.Fprintf(&b, "\n  evidence: %s", s)
	}
	return b.String()
}

// Issue 20, the slot-move scenario: job.slots 2, 2 partitions, two
// members on two data dirs; m1 loads, m2 joins and decides checkpoints of
// the slot it takes, m2 is stopped (the slot moves back), m1 loads more.
// verify reads the evidence topic, so it is clean from m1's config, from
// m2's and from a config with an empty data dir (before this, each exited
// 5: its own ledgers held only part of each slot's checkpoints); one row
// written behind the job's back is then a gap from every one of them.
func TestGroupVerifyAfterSlotMovesFromEveryMember(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 2, 2)
	m1 := e.start("m1", "")
	e.ownership(map[*groupMember]int{m1: 2})
	e.produce(20)
	e.waitAllDecided()
	m2 := e.start("m2", "")
	e.ownership(map[*groupMember]int{m1: 1, m2: 1})
	e.produce(40)
	e.waitUntil("m2 decided two checkpoints", func() bool { _, per := e.decidedLocked(); return per["m2"] >= 2 })
	e.waitAllDecided()
	if err := e.stop(m2); err != nil {
		t.Fatalf("m2: %v", err)
	}
	e.ownership(map[*groupMember]int{m1: 2})
	e.produce(40)
	e.waitAllDecided()
	if err := e.stop(m1); err != nil {
		t.Fatalf("m1: %v", err)
	}
	e.checkExactlyOnce()

	for _, who := range []string{"m1", "m2", "empty"} {
		rep := e.verifyAs(who)
		if err := rep.Err(); err != nil {
			t.Errorf("verify -c %s: %v (want exit 0):%s", who, err, describe(rep))
			continue
		}
		if tc := rep.TableCount; tc == nil || tc.Status != verify.TableCountOK || tc.Rows != int64(e.produced) {
			t.Errorf("verify -c %s: table count %+v, want ok with %d rows", who, tc, e.produced)
		}
		for _, s := range rep.Sources {
			if s.Source != verify.SourceEvidenceTopic {
				t.Errorf("verify -c %s: %s, want every checkpoint from the evidence topic", who, s)
			}
		}
		if rep.Evidence == nil || len(rep.Evidence.Records) == 0 {
			t.Errorf("verify -c %s: no evidence records in the report (-o json exports them)", who)
		}
	}

	// Retention drops the evidence topic's early records: verify warns,
	// naming the retention, and still compares the table count from the
	// slots' cumulative totals in their first records left.
	e.expireEarlyEvidence()
	for _, who := range []string{"m1", "empty"} {
		rep := e.verifyAs(who)
		if err := rep.Err(); err != nil {
			t.Errorf("verify -c %s after retention: %v (want exit 0):%s", who, err, describe(rep))
			continue
		}
		if tc := rep.TableCount; tc == nil || tc.Status != verify.TableCountOK || tc.Rows != int64(e.produced) {
			t.Errorf("verify -c %s after retention: table count %+v, want ok with %d rows:%s", who, tc, e.produced, describe(rep))
		}
		if !strings.Contains(describe(rep), "expired (the topic's retention.ms / retention.bytes)") {
			t.Errorf("verify -c %s after retention: no warning naming the retention:%s", who, describe(rep))
		}
	}

	// One row behind the job's back (a Stream Load of another label).
	cfg, err := config.Load(config.LoadOptions{File: filepath.Join(e.dir, "m1.yaml"), Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	if _, err := dc.StreamLoad(t.Context(), doris.LoadRequest{DB: "demo", Table: "t", Label: "by-hand-1", Format: "json",
		ReadJSONByLine: true}, strings.NewReader(`{"id":100000,"v":"x"}`)); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"m1", "m2", "empty"} {
		rep := e.verifyAs(who)
		var ge *cmdutil.GapsError
		if err := rep.Err(); !errors.As(err, &ge) {
			t.Errorf("verify -c %s after a row written behind the job's back: %v, want exit 5:%s", who, err, describe(rep))
			continue
		}
		if tc := rep.TableCount; tc == nil || !strings.Contains(tc.Note, "1 extra rows") {
			t.Errorf("verify -c %s: table count %+v, want 1 extra rows", who, tc)
		}
	}
}
