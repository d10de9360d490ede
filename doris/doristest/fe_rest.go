package doristest

// Behavior: the FE REST endpoints the Doris Flink and Kafka connectors call
// (docs/doris-facts.md §12 "FE REST used by connectors"). Every answer is HTTP 200
// with a ResponseBody envelope {"msg","code","data","count"}
// (fe httpv2/entity/ResponseEntityBuilder.java: ok → msg "success" code 0;
// okWithCommonError → msg "Error" code 1, data = message; notFound → msg
// "Not Found" code 404; unauthorized → msg "Unauthorized" code 401).
// Auth, per endpoint, as the FE does it:
//   - Basic auth checked (RestBaseController.executeCheckPassword; no
//     privilege check beyond it, the emulator has no privileges):
//     GET /api/{db}/{table}/_schema (TableSchemaAction.schema),
//     GET /api/enable_light_schema_change/{db}/{table}
//     (TableSchemaAction.columnChangeCanSync), GET /api/backends
//     (BackendsAction: "It only requires password, no auth check"),
//     GET /rest/v1/system (SystemController, behind the FE's /rest/v1 auth
//     interceptor).
//   - No auth: GET /api/health (HealthAction checks only when
//     enable_all_http_auth, default false) and GET /api/bootstrap
//     (BootstrapFinishAction is not a RestBaseController).
// Files: fe_rest_schema.go (_schema, enable_light_schema_change),
// fe_rest_backends.go (backends, system, health, bootstrap).

import "net/http"

func (s *Server) feRESTRoutes(mux *http.ServeMux) {
	// One pattern for both: net/http refuses the two overlapping patterns
	// /api/{db}/{table}/_schema and /api/enable_light_schema_change/{db}/{table}.
	mux.HandleFunc("GET /api/{a}/{b}/{c}", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.PathValue("a") == "enable_light_schema_change":
			s.feLightSchemaChange(w, r, r.PathValue("b"), r.PathValue("c"))
		case r.PathValue("c") == "_schema":
			s.feTableSchema(w, r, r.PathValue("a"), r.PathValue("b"))
		case r.PathValue("c") == "_stream_load" || r.PathValue("c") == "_stream_load_2pc":
			// These are PUT-only, as before this catch-all pattern existed.
			w.Header().Set("Allow", http.MethodPut)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /api/backends", s.feBackends)
	mux.HandleFunc("GET /rest/v1/system", s.feSystem)
	mux.HandleFunc("GET /api/health", s.feHealth)
	mux.HandleFunc("GET /api/bootstrap", s.feBootstrap)
}

// writeFEOK sends ResponseEntityBuilder.ok(data): {"msg":"success","code":0,
// "data":data,"count":count}.
func writeFEOK(w http.ResponseWriter, data any, count int) {
	writeFEJSON(w, []field{{"msg", "success"}, {"code", 0}, {"data", data}, {"count", count}})
}

// writeFECommonError sends ResponseEntityBuilder.okWithCommonError(msg).
func writeFECommonError(w http.ResponseWriter, msg string) {
	writeFEResponseBody(w, "Error", 1, msg)
}
