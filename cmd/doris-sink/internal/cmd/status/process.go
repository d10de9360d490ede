package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
)

// maxStatusBytes bounds the /status answer read.
const maxStatusBytes = 1 << 20

// askProcess asks metrics.listen for GET /status and returns this job's
// entry (nil when the process is not running, cannot be asked or answers
// for another job), filling res.Process and res.State.
func askProcess(ctx context.Context, cfg *config.Config, table string, res *Result) *metrics.JobStatus {
	res.State = StateUnknown
	if cfg.Metrics.Listen == "" {
		res.Process.Detail = "metrics.listen is empty: the process (if any) cannot be asked"
		return nil
	}
	addr := dialAddr(cfg.Metrics.Listen)
	res.Process.Addr = addr
	st, err := getStatus(ctx, addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			res.State = StateNotRunning
			res.Process.Detail = "nothing listens on " + addr + " (metrics.listen)"
		} else {
			res.Process.Detail = err.Error()
		}
		return nil
	}
	if g, mem := st.Group, st.Membership; (g != nil || mem != nil) && memberOf(cfg, table, g, mem) {
		// A group member: it answers for the slots it owns, and its
		// membership says whether it is in the group or rebalancing, and
		// since when.
		res.Process.Running, res.Process.PID, res.Process.StartedAt = true, st.PID, st.StartedAt
		if g != nil {
			res.Process.MemberID, res.Process.Generation, res.Process.Slots = g.MemberID, &g.Generation, g.Owned
		}
		res.Membership = mem
		res.State = metrics.StateRunning
		if !st.Ready {
			res.State = metrics.StateRecovering
		}
		for _, s := range ownedOf(g) {
			if s.Job != nil && s.Job.Stall != nil {
				res.State, res.Stall = metrics.StateStalled, s.Job.Stall
			}
		}
		if m := st.Membership; m != nil && m.RebalancingSince != nil {
			res.State = StateRebalancing
		}
		return nil
	}
	for i := range st.Jobs {
		j := &st.Jobs[i]
		// The job name is known once recovery read the store: "" while
		// recovering is this job if topic and table match.
		if (j.Job == cfg.Job.Name || j.Job == "") && j.Table == table && j.Topic == cfg.Kafka.DescribeTopics() {
			res.Process.Running, res.Process.PID, res.Process.StartedAt = true, st.PID, st.StartedAt
			return j
		}
	}
	var others []string
	for _, j := range st.Jobs {
		others = append(others, fmt.Sprintf("job %q (%s → %s)", j.Job, j.Topic, j.Table))
	}
	res.Process.Detail = fmt.Sprintf("process %d on %s runs %v, not job %q (%s → %s)", st.PID, addr, others,
		cfg.Job.Name, cfg.Kafka.DescribeTopics(), table)
	return nil
}

// dialAddr is where to reach a listen address: a wildcard host is asked
// on loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// getStatus fetches and decodes http://addr/status.
func getStatus(ctx context.Context, addr string) (*metrics.Status, error) {
	url := "http://" + addr + "/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	// A client of its own: no proxy from the environment, no shared state.
	cl := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBytes))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s (a doris-sink older than the status command, or another server, listens there)", url, resp.Status)
	}
	var st metrics.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("GET %s: not a doris-sink status: %w", url, err)
	}
	return &st, nil
}

// memberOf reports whether a process whose /status carries the group view
// g and the membership mem (either may be nil) is a member of cfg's job
// loading table: a job run through the consumer group (config.GroupMode:
// job.coordinator kafka, job.slots 1 too) with the same topics and table,
// in the same consumer group.
func memberOf(cfg *config.Config, table string, g *metrics.GroupStatus, mem *metrics.MembershipStatus) bool {
	if !cfg.GroupMode() {
		return false
	}
	if g != nil && (g.Table != table || g.Topic != cfg.Kafka.DescribeTopics()) {
		return false
	}
	return mem == nil || mem.Group == cfg.Kafka.Group
}

// ownedOf returns the slots g lists (none when g is nil).
func ownedOf(g *metrics.GroupStatus) []metrics.SlotStatus {
	if g == nil {
		return nil
	}
	return g.Owned
}
