package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/status"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
)

// Issue 21: two members of a 4-slot job, scraped while records flow:
// each member's /metrics has the lag series with a slot label for each
// slot it owns (together slots 0–3), doris_sink_slot_owned sums to 1 per
// slot over the members, /status lists the member's owned slots with
// their last decided checkpoint and lag per partition, and `status -c
// cfg` lists the four slots with their owners (and the asked member's).
func TestGroupMetricsPerSlot(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	e.listen = "127.0.0.1:0"
	a := e.start("a", "")
	addrA := strings.TrimSuffix(fmt.Sprint(a.tap.wait(t, "metrics endpoint")["addr"]), "/metrics")
	e.ownership(map[*groupMember]int{a: 4})
	b := e.start("b", "")
	addrB := strings.TrimSuffix(fmt.Sprint(b.tap.wait(t, "metrics endpoint")["addr"]), "/metrics")
	e.ownership(map[*groupMember]int{a: 2, b: 2})
	e.produce(200)
	e.waitAllDecided()
	e.produce(40) // records flowing while scraped

	lag := regexp.MustCompile(`^doris_sink_lag_loaded_records\{.*slot="(\d+)".*\} `)
	owned := regexp.MustCompile(`^doris_sink_slot_owned\{.*slot="(\d+)".*\} (\d)`)
	sum := map[string]int{}
	var covered []string
	for _, m := range []struct {
		g    *groupMember
		addr string
	}{{a, addrA}, {b, addrB}} {
		e.mu.Lock()
		want := m.g.ownedLocked()
		e.mu.Unlock()
		body := get(t, m.addr+"/metrics")
		var lagSlots []string
		ownedHere := 0
		for l := range strings.SplitSeq(body, "\n") {
			if g := lag.FindStringSubmatch(l); g != nil && !slices.Contains(lagSlots, g[1]) {
				lagSlots = append(lagSlots, g[1])
			}
			if g := owned.FindStringSubmatch(l); g != nil {
				sum[g[1]] += int(g[2][0] - '0')
				ownedHere++
			}
		}
		slices.Sort(lagSlots)
		var wantS []string
		for _, s := range want {
			wantS = append(wantS, fmt.Sprint(s))
		}
		if !slices.Equal(lagSlots, wantS) {
			t.Errorf("member %s: lag series of slots %v, owns %v", m.g.name, lagSlots, wantS)
		}
		if ownedHere != 4 {
			t.Errorf("member %s: %d doris_sink_slot_owned series, want 4 (every slot)", m.g.name, ownedHere)
		}
		for _, s := range []string{"doris_sink_stalled{", "doris_sink_slot_checkpoint_decided_id{", "doris_sink_rows_committed_total{", "doris_sink_stage_seconds_bucket{"} {
			if !strings.Contains(body, s) || !regexp.MustCompile(regexp.QuoteMeta(s)+`[^}]*slot="`).MatchString(body) {
				t.Errorf("member %s: no %s series with a slot label", m.g.name, s)
			}
		}
		covered = append(covered, lagSlots...)

		var st metrics.Status
		if err := json.Unmarshal([]byte(get(t, m.addr+"/status")), &st); err != nil || st.Group == nil {
			t.Fatalf("member %s /status: %v %+v", m.g.name, err, st)
		}
		var stSlots []int
		for _, s := range st.Group.Owned {
			stSlots = append(stSlots, s.Slot)
			if s.Job == nil || s.Job.LastCheckpoint == nil || len(s.Job.Partitions) != 2 || s.Job.Partitions[0].Lag == nil {
				t.Errorf("member %s /status slot %d: %+v", m.g.name, s.Slot, s.Job)
			}
		}
		if !slices.Equal(stSlots, want) || st.Group.Generation < 1 || st.Group.MemberID == "" {
			t.Errorf("member %s /status: slots %v generation %d member %q, owns %v", m.g.name, stSlots, st.Group.Generation, st.Group.MemberID, want)
		}
	}
	slices.Sort(covered)
	if !slices.Equal(covered, []string{"0", "1", "2", "3"}) {
		t.Errorf("lag series cover slots %v, want 0-3", covered)
	}
	for s := range 4 {
		if n := sum[fmt.Sprint(s)]; n != 1 {
			t.Errorf("slot %d: doris_sink_slot_owned sums to %d over the members, want 1", s, n)
		}
	}
	// `status -c cfg` of a member's config: the whole group from Kafka
	// (every slot with its owner) and the asked member's slots.
	cfgA, err := os.ReadFile(filepath.Join(e.dir, "a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "status-a.yaml")
	if err := os.WriteFile(path, bytes.Replace(cfgA, []byte(`listen: "127.0.0.1:0"`),
		[]byte(`listen: "`+strings.TrimPrefix(addrA, "http://")+`"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	cmd := status.NewCmdStatus(f, nil)
	cmd.SetArgs([]string{"-c", path, "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var res struct {
		State   string `json:"state"`
		Process struct {
			Running bool                 `json:"running"`
			Slots   []metrics.SlotStatus `json:"slots"`
		} `json:"process"`
		Group *jobstate.Group `json:"group"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Group == nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	owners := map[string]bool{}
	for _, sv := range res.Group.SlotViews {
		if sv.Owner == nil || sv.Checkpoint == 0 {
			t.Errorf("status: slot %d has owner %v, checkpoint %d", sv.Slot, sv.Owner, sv.Checkpoint)
			continue
		}
		owners[sv.Owner.MemberID] = true
	}
	e.mu.Lock()
	wantA := a.ownedLocked()
	e.mu.Unlock()
	var gotA []int
	for _, s := range res.Process.Slots {
		gotA = append(gotA, s.Slot)
	}
	if len(res.Group.SlotViews) != 4 || len(owners) != 2 || !res.Process.Running || res.State != metrics.StateRunning ||
		!slices.Equal(gotA, wantA) {
		t.Errorf("status: %d slots owned by %d members, process running %v state %q slots %v (a owns %v)\n%s",
			len(res.Group.SlotViews), len(owners), res.Process.Running, res.State, gotA, wantA, out)
	}
	f, out, _ = cmdutil.NewTestFactory(false)
	cmd = status.NewCmdStatus(f, nil)
	cmd.SetArgs([]string{"-c", path})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := out.String(); !strings.Contains(h, "Writer slots (4)") || len(regexp.MustCompile(`(?m)^\d\t.*\trunning$`).FindAllString(h, -1)) != len(wantA) {
		t.Errorf("status human view (the member's %d slots running):\n%s", len(wantA), h)
	}
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// get returns the body of GET url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
