package doristest

// Behavior: the FE and BE HTTP endpoints answer what real clients send
// (doris-sink, doris-streamloader, the Doris Go SDK, curl as Doris's docs
// write it: `curl --location-trusted -u user:passwd -H "label:123" -T
// data.file http://host:8030/api/db/tbl/_stream_load`) and refuse what a
// web page could make a browser send (sandboxguard; the emulator only,
// real Doris checks none of this):
//   - a Host that is not a loopback name, the endpoint's URL or listen
//     host, or (listening on 0.0.0.0 / ::) an IP literal: 403 (DNS
//     rebinding);
//   - an Origin that is not the Host: 403;
//   - no FE or BE route is a POST (a POST gets 405, as from Doris), the one
//     method a cross-site form or CORS-simple fetch could forge; Stream Load
//     and 2PC are PUTs, which a browser sends cross-origin only after a
//     preflight the emulator never answers, so their content is not
//     restricted;
//   - a body longer than 1 MiB on anything but a Stream Load: 413 (2PC,
//     get_load_state and the REST calls carry none). Stream Load bodies are
//     not bounded here: they are the data.

import (
	"net/http"
	"strings"

	"github.com/doris-sink/doris-sink/doris/doristest/sandboxguard"
)

// maxSmallBody bounds the body of every FE/BE request but a Stream Load.
const maxSmallBody = 1 << 20

// sandboxGuard wraps an FE or BE handler; urlHost is the host the emulator
// puts in its URLs (redirect Locations, /api/backends), listenHost the one
// it listens on.
func sandboxGuard(urlHost, listenHost string, next http.Handler) http.Handler {
	return &sandboxguard.Guard{
		Hosts: []string{urlHost, listenHost},
		AnyIP: isUnspecifiedHost(listenHost),
		MaxBody: func(r *http.Request) int64 {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/_stream_load") {
				return 0
			}
			return maxSmallBody
		},
		Next: next,
	}
}
