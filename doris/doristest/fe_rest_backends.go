package doristest

// Behavior:
//   - GET /api/backends[?is_alive=true] (fe httpv2/rest/BackendsAction.java)
//     → ok({"backends":[{"ip","http_port","is_alive"}]}): exactly these
//     three fields per row (the Kafka connector's BackendRowV2 has no
//     ignoreUnknown, so an extra field would break it); is_alive=true
//     (case-insensitive) keeps only BEs the FE sees alive (heartbeat,
//     backends.go). Basic auth required.
//   - GET /rest/v1/system?path=<proc path> (fe httpv2/controller/
//     SystemController.java): only the backends proc ("/backends",
//     "//backends": ProcService ignores empty path elements). Reply:
//     ok({"column_names":[BackendsProcDir.TITLE_NAMES],"rows":[{title:
//     value…, "__hrefPaths":["/rest/v1/system?path=<path>/<BackendId>"]}],
//     "href_columns":["BackendId"],"parent_url":"/rest/v1/system?path=/"})
//     with count = number of rows; every value a string ("Alive":"true").
//     Columns the emulator has no notion of (capacities, tablets, memory)
//     hold zero values. Other paths → notFound("No such proc path[<path>]").
//     Basic auth required.
//   - GET /api/health (HealthAction.java) → ok({"total_backend_num":N,
//     "online_backend_num":M}), no auth.
//   - GET /api/bootstrap (BootstrapFinishAction.java, the Env-era version
//     with BootstrapResult{replayedJournalId, queryPort, rpcPort,
//     arrowFlightSqlPort, version}; 1.x had startTime instead of the arrow
//     port) → ok({"replayedJournalId":0,"queryPort":0,"rpcPort":0,
//     "arrowFlightSqlPort":0,"version":""}): the answer without
//     cluster_id/token, which the emulator gives whatever the parameters (it
//     has no cluster id). No auth (checked only with enable_all_http_auth).

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"
)

func (s *Server) feBackends(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	if _, _, ok := s.feAuth(w, r); !ok {
		return
	}
	needAlive := strings.EqualFold(r.URL.Query().Get("is_alive"), "true")
	rows := []any{}
	for _, b := range s.Backends() {
		if needAlive && !b.Alive {
			continue
		}
		rows = append(rows, []field{{"ip", b.Host}, {"http_port", b.HTTPPort}, {"is_alive", b.Alive}})
	}
	writeFEOK(w, []field{{"backends", rows}}, 0)
}

// backendsProcTitles is BackendsProcDir.TITLE_NAMES.
var backendsProcTitles = []string{"BackendId", "Host", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort",
	"ArrowFlightSqlPort", "LastStartTime", "LastHeartbeat", "Alive", "SystemDecommissioned", "TabletNum",
	"DataUsedCapacity", "TrashUsedCapacity", "AvailCapacity", "TotalCapacity", "UsedPct", "MaxDiskUsedPct",
	"RemoteUsedCapacity", "Tag", "ErrMsg", "Version", "Status", "HeartbeatFailureCounter", "CpuCores",
	"Memory", "RunningTasks", "NodeRole"}

func (s *Server) feSystem(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	if _, _, ok := s.feAuth(w, r); !ok {
		return
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		path = "/"
	}
	var elems []string
	for _, e := range strings.Split(path, "/") {
		if e != "" {
			elems = append(elems, e)
		}
	}
	if !strings.HasPrefix(path, "/") || len(elems) != 1 || elems[0] != "backends" {
		writeFEResponseBody(w, "Not Found", 404, "No such proc path["+path+"]")
		return
	}
	now := s.clock.Now()
	titles := make([]any, len(backendsProcTitles))
	for i, t := range backendsProcTitles {
		titles[i] = t
	}
	rows := []any{}
	s.beMu.Lock()
	started := make([]time.Time, len(s.bes))
	for i, b := range s.bes {
		started[i] = b.startedAt
	}
	s.beMu.Unlock()
	for i, b := range s.Backends() {
		alive := strconv.FormatBool(b.Alive)
		role := ""
		if b.Alive {
			role = "mix"
		}
		vals := []string{strconv.FormatInt(b.ID, 10), b.Host, strconv.Itoa(beHeartbeatPort), strconv.Itoa(beBEPort),
			strconv.Itoa(b.HTTPPort), strconv.Itoa(beBrpcPort), "-1", procTime(started[i]), procTime(now), alive,
			"false", "0", "0.000 ", "0.000 ", "0.000 ", "0.000 ", "0.00 %", "0.00 %", "0.000 ",
			`{"location" : "default"}`, "", mysqlfront.DorisBuildVersion, `{"lastSuccessReportTabletsTime":"N/A","lastStreamLoadTime":-1,"isQueryDisabled":false,"isLoadDisabled":false}`,
			"0", "0", "0.00 ", strconv.Itoa(b.LoadsRunning), role}
		row := make([]field, 0, len(vals)+1)
		for j, v := range vals {
			row = append(row, field{backendsProcTitles[j], v})
		}
		row = append(row, field{"__hrefPaths", []any{"/rest/v1/system?path=" + path + "/" + strconv.FormatInt(b.ID, 10)}})
		rows = append(rows, row)
	}
	writeFEOK(w, []field{
		{"column_names", titles},
		{"rows", rows},
		{"href_columns", []any{"BackendId"}},
		{"parent_url", "/rest/v1/system?path=/"},
	}, len(rows))
}

// procTime is TimeUtils.longToTimeString: "yyyy-MM-dd HH:mm:ss".
func procTime(t time.Time) string { return t.Format(time.DateTime) }

func (s *Server) feHealth(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	bes := s.Backends()
	online := 0
	for _, b := range bes {
		if b.Alive {
			online++
		}
	}
	writeFEOK(w, []field{{"total_backend_num", len(bes)}, {"online_backend_num", online}}, 0)
}

func (s *Server) feBootstrap(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	writeFEOK(w, []field{{"replayedJournalId", 0}, {"queryPort", 0}, {"rpcPort", 0}, {"arrowFlightSqlPort", 0}, {"version", ""}}, 0)
}
