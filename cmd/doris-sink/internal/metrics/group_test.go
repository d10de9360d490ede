package metrics

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 29: a group member out of its consumer group (a failed group
// session) is reported with since when and why: /status's group field,
// /readyz 503 naming it, the session-failure counter and the
// rebalancing-since gauge; an assignment clears it.
func TestGroupMembershipOutAndIn(t *testing.T) {
	t.Parallel()
	m := New()
	now := time.Date(2026, 12, 1, 21, 30, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	m.SetReady(true)
	if g := m.Status().Membership; g != nil {
		t.Fatalf("a process that never joined a group reports %+v", g)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	m.GroupIn("doris-sink-orders", 5, []int{2, 0})
	if g := m.Status().Membership; g == nil || !g.InGroup || g.Generation != 5 || !slices.Equal(g.Slots, []int{2, 0}) ||
		g.RebalancingSince != nil {
		t.Fatalf("in the group: %+v", g)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz in the group = %d, want 200", code)
	}

	since := now.Add(-70 * time.Second)
	m.GroupOut("doris-sink-orders", since, errors.New("unable to join group session: i/o timeout"))
	m.GroupOut("doris-sink-orders", since, errors.New("unable to join group session: UNKNOWN_MEMBER_ID"))
	g := m.Status().Membership
	if g == nil || g.InGroup || len(g.Slots) != 0 || g.RebalancingSince == nil || !g.RebalancingSince.Equal(since) ||
		g.RebalancingSeconds != 70 || g.SessionFailures != 2 || !strings.Contains(g.LastError, "UNKNOWN_MEMBER_ID") {
		t.Fatalf("out of the group: %+v", g)
	}
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "out of consumer group doris-sink-orders (rebalancing) for 1m10s") ||
		!strings.Contains(body, "UNKNOWN_MEMBER_ID") {
		t.Errorf("/readyz out of the group = %d %q, want 503 naming the group, how long and why", code, body)
	}
	_, metricsBody := get("/metrics")
	for _, want := range []string{"doris_sink_group_session_failures_total 2",
		"doris_sink_group_rebalancing_since_timestamp_seconds " + strconv.FormatFloat(float64(since.Unix()), 'g', -1, 64)} {
		if !strings.Contains(metricsBody, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	_, body = get("/status")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Membership == nil || st.Membership.RebalancingSince == nil || !st.Membership.RebalancingSince.Equal(since) || st.Membership.SessionFailures != 2 {
		t.Errorf("/status lacks the group's rebalancing: %s", body)
	}

	m.GroupIn("doris-sink-orders", 7, []int{1})
	if g := m.Status().Membership; !g.InGroup || g.RebalancingSince != nil || g.SessionFailures != 2 || g.Generation != 7 {
		t.Errorf("back in the group: %+v", g)
	}
	if _, body := get("/metrics"); !strings.Contains(body, "doris_sink_group_rebalancing_since_timestamp_seconds 0") {
		t.Error("the rebalancing-since gauge is not 0 back in the group")
	}
}
