package label

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

func TestDorisPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prefix, want string
		ok           bool
	}{
		{"", "job:", true},
		{"jo", "job:", true},
		{"job:", "job:", true},
		{"job:demo-t:0:4", "job:demo-t:0:4", true},
		{"job:a.b", "", false}, // '.' is no label character (and a regex one)
		{"other:", "", false},
	} {
		got, ok := dorisPattern("job:", c.prefix)
		if got != c.want || ok != c.ok {
			t.Errorf("dorisPattern(job:, %q) = %q, %v; want %q, %v", c.prefix, got, ok, c.want, c.ok)
		}
	}
}

// The store's labels, the ledger's and Doris's are merged; a label only
// Doris holds is flagged, a fencing risk unless ABORTED.
func TestMergeFlagsLabelsUnknownToJob(t *testing.T) {
	t.Parallel()
	store := []jobstate.Label{
		{Label: "job:demo-t:0:5", Checkpoint: 5, Role: jobstate.RoleAnnounced},
		{Label: "job:demo-t:0:4", Checkpoint: 4, Role: jobstate.RoleDecided, TxnID: 40},
	}
	entries := []ledger.Entry{
		{Event: ledger.EventDecided, Checkpoint: 4, Label: "job:demo-t:0:4", TxnID: 40},
		{Event: ledger.EventCommitted, Checkpoint: 3, Label: "job:demo-t:0:3", TxnID: 30},
	}
	txns := []doris.Transaction{ // newest first
		{ID: 91, Label: "job:demo-t:1:9", Status: doris.TxnPrecommitted},
		{ID: 90, Label: "job:demo-t:0:8", Status: doris.TxnAborted},
		{ID: 41, Label: "job:demo-t:0:4", Status: doris.TxnVisible},
		{ID: 40, Label: "job:demo-t:0:4", Status: doris.TxnAborted}, // an older attempt
		{ID: 30, Label: "job:demo-t:0:3", Status: doris.TxnVisible},
		{ID: 7, Label: "jobX:demo-t:0:1", Status: doris.TxnVisible}, // not the prefix: filtered out
	}
	items := merge(store, entries, txns, "job:", "")
	var got []string
	for _, it := range items {
		got = append(got, it.Label.Label+" "+strings.Join(it.FoundIn, ","))
	}
	want := []string{
		"job:demo-t:1:9 doris",
		"job:demo-t:0:8 doris",
		"job:demo-t:0:5 store",
		"job:demo-t:0:4 store,ledger,doris",
		"job:demo-t:0:3 ledger,doris",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows\n got %q\nwant %q", got, want)
	}
	if !items[0].UnknownToJob || !items[0].fencingRisk() || items[0].DorisTxnID != 91 {
		t.Errorf("PRECOMMITTED foreign label: %+v, want unknown_to_job and a fencing risk", items[0])
	}
	if !items[1].UnknownToJob || items[1].fencingRisk() {
		t.Errorf("ABORTED foreign label: %+v, want unknown_to_job, no fencing risk", items[1])
	}
	if it := items[3]; it.UnknownToJob || it.DorisState != "VISIBLE" || it.DorisTxnID != 41 || it.TxnID != 40 {
		t.Errorf("store label: %+v, want the latest txn 41 VISIBLE, store txn 40", it)
	}
	if it := items[4]; it.UnknownToJob || it.Checkpoint != 3 || it.TxnID != 30 || it.Role != "" {
		t.Errorf("ledger label: %+v", it)
	}
	if it := items[2]; it.DorisState != "" || it.UnknownToJob {
		t.Errorf("store label Doris did not list: %+v, want no state yet (get_load_state asks)", it)
	}

	narrowed := merge(store[1:], entries, txns, "job:", "job:demo-t:0:")
	if len(narrowed) != 3 || narrowed[0].Label.Label != "job:demo-t:0:8" {
		t.Errorf("--prefix job:demo-t:0: rows = %+v", narrowed)
	}
	if none := merge(nil, nil, nil, "job:", ""); none == nil || len(none) != 0 {
		t.Errorf("nothing anywhere = %#v, want an empty non-nil list (prints [])", none)
	}
}

// Against the emulator: a label loaded under the job's prefix by another
// writer shows up flagged; the job's own label is found in store and Doris
// (docs/doris-facts.md §6.2 LIKE).
func TestListWithDorisEmulator(t *testing.T) {
	t.Parallel()
	_, c := cmdutil.NewTestDoris(t, `CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")`)
	ctx := context.Background()
	for _, l := range []string{"job:demo-t:0:1", "job:demo-t:0:2", "other:demo-t:0:1"} {
		req := doris.LoadRequest{DB: "demo", Table: "t", Label: l, Format: "json", ReadJSONByLine: true, TwoPhaseCommit: true}
		if _, err := c.StreamLoad(ctx, req, strings.NewReader("{\"id\":1}\n")); err != nil {
			t.Fatalf("load %s: %v", l, err)
		}
	}
	f, _, errOut := cmdutil.NewTestFactory(false)
	store := []jobstate.Label{{Label: "job:demo-t:0:1", Checkpoint: 1, Role: jobstate.RoleAnnounced, At: time.Now()}}
	items := listWithDoris(ctx, &ListOptions{IO: f.IO}, c, "demo", store, nil, "job:")
	if len(items) != 2 {
		t.Fatalf("items = %+v, want job:demo-t:0:2 and job:demo-t:0:1", items)
	}
	if it := items[0]; it.Label.Label != "job:demo-t:0:2" || !it.UnknownToJob || it.DorisState != "PRECOMMITTED" {
		t.Errorf("foreign label row %+v", it)
	}
	if it := items[1]; it.UnknownToJob || !slices.Equal(it.FoundIn, []string{FoundStore, FoundDoris}) {
		t.Errorf("own label row %+v", it)
	}
	if err := printList(f.IO, items, "job:"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "1 not ABORTED") {
		t.Errorf("stderr %q lacks the fencing warning", errOut.String())
	}
}

// Issue 20: a healthy job's open checkpoint (announced, no row written to
// it yet, so Doris has no txn of the label) is listed "open", not
// UNKNOWN; -o json keeps Doris's answer.
func TestListCallsTheOpenCheckpointOpen(t *testing.T) {
	t.Parallel()
	_, c := cmdutil.NewTestDoris(t, `CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")`)
	f, out, _ := cmdutil.NewTestFactory(false)
	store := []jobstate.Label{{Label: "job:demo-t:0:7", Checkpoint: 7, Role: jobstate.RoleAnnounced, At: time.Now()}}
	items := listWithDoris(context.Background(), &ListOptions{IO: f.IO}, c, "demo", store, nil, "job:")
	if len(items) != 1 || items[0].DorisState != string(doris.TxnUnknown) {
		t.Fatalf("items %+v, want the announced label, Doris UNKNOWN", items)
	}
	if err := printList(f.IO, items, "job:"); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "open") || strings.Contains(s, "UNKNOWN") {
		t.Errorf("table %q: want the open checkpoint called open", s)
	}
}
