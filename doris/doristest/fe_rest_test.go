package doristest

// Replays of the exact FE REST requests of the Doris Flink connector
// (apache/doris-flink-connector @79ae9b03, flink-doris-connector-base:
// rest/RestService.java, sink/BackendUtil.java,
// sink/schema/SchemaChangeManager.java) and the Doris Kafka connector
// (apache/doris-kafka-connector @6e614d8: service/RestService.java,
// utils/BackendUtils.java), each decoded the way their Jackson models read
// it. Both connectors' RestService.send unwrap the ResponseBody envelope
// when it has "code" and "msg" and re-parse "data". Jackson models with
// @JsonIgnoreProperties(ignoreUnknown = true) are decoded leniently here;
// the Kafka connector's BackendRowV2 has no such annotation, so its rows are
// decoded with DisallowUnknownFields. Expected bodies follow the FE actions
// cited in fe_rest*.go (TableSchemaAction, BackendsAction, SystemController,
// HealthAction, BootstrapFinishAction).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// connectorGet sends a GET like the connectors' HttpURLConnection /
// HttpClient code: Authorization set by hand, optional entity body (the
// Flink HttpGetWithEntity). It returns the HTTP status and body.
func connectorGet(t *testing.T, url, user, pw, body string) (int, string) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(http.MethodGet, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pw)))
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// unwrapData is RestService.send's envelope handling: with "code" and
// "msg", return "data" re-serialized; else the body itself. The connectors
// also require HTTP 200 (RestService.parseResponse).
func unwrapData(t *testing.T, status int, body string) []byte {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("HTTP %d, the connectors need 200 (body %s)", status, body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, body)
	}
	_, hasCode := m["code"]
	_, hasMsg := m["msg"]
	if hasCode && hasMsg {
		return m["data"]
	}
	return []byte(body)
}

// connectorField is rest/models/Field.java (ignoreUnknown). Doris sends
// precision and scale as strings; Jackson coerces them to int.
type connectorField struct {
	Name            string `json:"name"`
	Type            string `json:"type"`
	Comment         string `json:"comment"`
	Precision       int    `json:"precision,string"`
	Scale           int    `json:"scale,string"`
	AggregationType string `json:"aggregation_type"`
}

// connectorSchema is rest/models/Schema.java (ignoreUnknown).
type connectorSchema struct {
	Status     int              `json:"status"`
	KeysType   string           `json:"keysType"`
	Properties []connectorField `json:"properties"`
}

const schemaDDL = "CREATE TABLE s (id BIGINT NOT NULL COMMENT 'the key', d DATE, ts DATETIME(3), " +
	"amount DECIMAL(12,2), big DECIMAL(30,4), note VARCHAR(64), j JSON, txt TEXT) " +
	"UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"

// TestFERest_TableSchema_KafkaAndFlink replays the Kafka connector's
// RestService.getSchema (GET http://{fe}/api/{db}/{table}/_schema with
// Basic auth; at start-up: StreamLoadWriter → RestService.isUniqueKeyType,
// RecordService.obtainTableSchema) and Flink's RestService.getSchema/
// parseSchema (status must be 200).
func TestFERest_TableSchema_KafkaAndFlink(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, schemaDDL); err != nil {
		t.Fatal(err)
	}
	status, body := connectorGet(t, s.FEURL()+"/api/demo/s/_schema", "root", "", "")
	var sc connectorSchema
	if err := json.Unmarshal(unwrapData(t, status, body), &sc); err != nil {
		t.Fatalf("Schema.class: %v: %s", err, body)
	}
	wantEq(t, "status", sc.Status, 200)
	wantEq(t, "keysType (isUniqueKeyType)", sc.KeysType, "UNIQUE_KEYS")
	want := []connectorField{
		{Name: "id", Type: "BIGINT", Comment: "the key"},
		{Name: "d", Type: "DATEV2", AggregationType: "REPLACE"},
		{Name: "ts", Type: "DATETIMEV2", AggregationType: "REPLACE"},
		{Name: "amount", Type: "DECIMAL64", Precision: 12, Scale: 2, AggregationType: "REPLACE"},
		{Name: "big", Type: "DECIMAL128", Precision: 30, Scale: 4, AggregationType: "REPLACE"},
		{Name: "note", Type: "VARCHAR", AggregationType: "REPLACE"},
		{Name: "j", Type: "JSON", AggregationType: "REPLACE"},
		{Name: "txt", Type: "STRING", AggregationType: "REPLACE"},
	}
	wantEq(t, "properties", len(sc.Properties), len(want))
	for i := range want {
		wantEq(t, "column "+want[i].Name, sc.Properties[i], want[i])
	}
	// The envelope and data keys, byte for byte (ResponseEntityBuilder.ok).
	if !strings.HasPrefix(body, `{"msg":"success","code":0,"data":{"status":200,"tableType":"OLAP","keysType":"UNIQUE_KEYS","properties":[{"type":"BIGINT","comment":"the key","name":"id","aggregation_type":""},`) ||
		!strings.HasSuffix(body, `]},"count":0}`) {
		t.Fatalf("body %s", body)
	}
}

// _schema is computed from the catalog on each call: replacing the table
// (as an ALTER TABLE would change it) shows at once.
func TestFERest_TableSchema_FollowsCatalog(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	get := func() connectorSchema {
		status, body := connectorGet(t, s.FEURL()+"/api/demo/orders/_schema", "root", "", "")
		var sc connectorSchema
		if err := json.Unmarshal(unwrapData(t, status, body), &sc); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	first := get()
	wantEq(t, "keys", first.KeysType, "DUP_KEYS")
	wantEq(t, "v aggregation", first.Properties[1].AggregationType, "NONE")
	if err := s.dropTable(testDB, "orders", false); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(testDB, "CREATE TABLE orders (id BIGINT, total BIGINT SUM) AGGREGATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	second := get()
	wantEq(t, "keys", second.KeysType, "AGG_KEYS")
	wantDeep(t, "columns", []connectorField{second.Properties[0], second.Properties[1]},
		[]connectorField{{Name: "id", Type: "BIGINT"}, {Name: "total", Type: "BIGINT", AggregationType: "SUM"}})
}

// Errors and auth (TableSchemaAction: executeCheckPassword first, then
// okWithCommonError for an unknown db or table).
func TestFERest_TableSchema_Errors(t *testing.T) {
	t.Parallel()
	s := newServer(t, Users(map[string]string{"root": "pw"}))
	_, body := connectorGet(t, s.FEURL()+"/api/demo/orders/_schema", "", "", "")
	wantEq(t, "no auth", body, `{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`)
	_, body = connectorGet(t, s.FEURL()+"/api/demo/orders/_schema", "root", "bad", "")
	wantEq(t, "bad password", decode(t, body)["code"], any(json.Number("401")))
	_, body = connectorGet(t, s.FEURL()+"/api/nodb/orders/_schema", "root", "pw", "")
	wantEq(t, "no db", body, `{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = Unknown database 'nodb'","count":0}`)
	_, body = connectorGet(t, s.FEURL()+"/api/demo/nope/_schema", "root", "pw", "")
	wantEq(t, "no table", body, `{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = Unknown table 'nope' in demo","count":0}`)
}

// Flink SchemaChangeManager.checkSchemaChange: GET with an entity body
// {"isDropColumn":…,"columnName":…}; handleSchemaChange wants code "0".
func TestFERest_EnableLightSchemaChange_Flink(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	code := func(db, tbl, body string) (string, string) {
		status, raw := connectorGet(t, s.FEURL()+"/api/enable_light_schema_change/"+db+"/"+tbl, "root", "", body)
		wantEq(t, "HTTP", status, 200)
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatFloat(m["code"].(float64), 'f', -1, 64), raw
	}
	c, raw := code("demo", "orders", `{"columnName":"v","isDropColumn":true}`)
	wantEq(t, "drop value column", c, "0")
	wantEq(t, "ok body", raw, `{"msg":"success","code":0,"data":null,"count":0}`)
	c, _ = code("demo", "orders", `{"isDropColumn":false,"columnName":"new_col"}`)
	wantEq(t, "add column", c, "0")
	_, raw = code("demo", "orders", `{"isDropColumn":true,"columnName":"id"}`)
	wantEq(t, "drop key", raw, `{"msg":"Error","code":1,"data":"Column id is primary key in materializedIndex that can't do the light schema change","count":0}`)
	if err := s.CreateTable(testDB, `CREATE TABLE nolsc (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("light_schema_change" = "false")`); err != nil {
		t.Fatal(err)
	}
	_, raw = code("demo", "nolsc", `{"isDropColumn":false,"columnName":"x"}`)
	wantEq(t, "disabled", raw, `{"msg":"Error","code":1,"data":"table nolsc disable light schema change","count":0}`)
	c, _ = code("demo", "nope", `{"isDropColumn":false,"columnName":"x"}`)
	wantEq(t, "unknown table", c, "1")
	_, raw = connectorGet(t, s.FEURL()+"/api/enable_light_schema_change/demo/orders", "", "", "")
	wantEq(t, "auth", decode(t, raw)["code"], any(json.Number("401")))
}

// kafkaBackendRow is the Kafka connector's model/BackendV2.BackendRowV2
// (no ignoreUnknown: any extra field fails the connector).
type kafkaBackendRow struct {
	IP       string `json:"ip"`
	HTTPPort int    `json:"http_port"`
	IsAlive  bool   `json:"is_alive"`
}

// TestFERest_Backends_KafkaAndFlink replays RestService.getBackendsV2 of
// both connectors (GET /api/backends?is_alive=true, auto-redirect off) and
// BackendUtil.tryHttpConnection (GET / on the BE; any code < 500 is alive).
func TestFERest_Backends_KafkaAndFlink(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(2))
	status, body := connectorGet(t, s.FEURL()+"/api/backends?is_alive=true", "root", "", "")
	var v2 struct {
		Backends []json.RawMessage `json:"backends"`
	}
	if err := json.Unmarshal(unwrapData(t, status, body), &v2); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "backends", len(v2.Backends), 2)
	for i, raw := range v2.Backends {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var row kafkaBackendRow
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("BackendRowV2 %s: %v", raw, err)
		}
		wantEq(t, "row", row, kafkaBackendRow{IP: "127.0.0.1", HTTPPort: s.Backends()[i].HTTPPort, IsAlive: true})
		// BackendUtil.getAvailableBackend → tryHttpConnection(ip:port).
		st, _ := connectorGet(t, "http://"+row.IP+":"+strconv.Itoa(row.HTTPPort)+"/", "", "", "")
		if st >= 500 {
			t.Fatalf("GET / on BE %d: HTTP %d", i, st)
		}
	}
	wantEq(t, "body", body, `{"msg":"success","code":0,"data":{"backends":[{"ip":"127.0.0.1","http_port":`+
		strconv.Itoa(s.Backends()[0].HTTPPort)+`,"is_alive":true},{"ip":"127.0.0.1","http_port":`+
		strconv.Itoa(s.Backends()[1].HTTPPort)+`,"is_alive":true}]},"count":0}`)
	_, body = connectorGet(t, s.FEURL()+"/api/backends", "", "", "")
	wantEq(t, "auth", body, `{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`)
	// RestService.randomEndpoint → tryHttpConnection on the FE too.
	if st, _ := connectorGet(t, s.FEURL()+"/", "", "", ""); st >= 500 {
		t.Fatalf("GET / on the FE: HTTP %d", st)
	}
}

// The Flink connector's deprecated path (RestService.BACKENDS, parsed by
// the old rest/models/Backend + BackendRow: rows[].HttpPort (string),
// Alive (Boolean from "true")), SystemController + BackendsProcDir. Doris
// ≥2.0 names the address column "Host" (no "IP"), as the emulator does.
func TestFERest_SystemBackends_FlinkDeprecated(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(2))
	status, body := connectorGet(t, s.FEURL()+"/rest/v1/system?path=//backends", "root", "", "")
	var old struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(unwrapData(t, status, body), &old); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "rows", len(old.Rows), 2)
	for i, row := range old.Rows {
		wantEq(t, "HttpPort", row["HttpPort"], any(strconv.Itoa(s.Backends()[i].HTTPPort)))
		wantEq(t, "Alive", row["Alive"], any("true"))
		wantEq(t, "Host", row["Host"], any("127.0.0.1"))
		wantDeep(t, "__hrefPaths", row["__hrefPaths"], any([]any{"/rest/v1/system?path=//backends/" + strconv.FormatInt(s.Backends()[i].ID, 10)}))
		if _, ok := row["IP"]; ok {
			t.Error("row has IP; Doris ≥2.0 calls it Host")
		}
	}
	m := decode(t, body)
	wantEq(t, "count", m["count"], any(json.Number("2")))
	data := m["data"].(map[string]any)
	wantEq(t, "columns", len(data["column_names"].([]any)), len(backendsProcTitles))
	wantDeep(t, "href_columns", data["href_columns"], any([]any{"BackendId"}))
	wantEq(t, "parent_url", data["parent_url"], any("/rest/v1/system?path=/"))
	_, body = connectorGet(t, s.FEURL()+"/rest/v1/system?path=/nothing", "root", "", "")
	wantEq(t, "unknown proc", body, `{"msg":"Not Found","code":404,"data":"No such proc path[/nothing]","count":0}`)
	_, body = connectorGet(t, s.FEURL()+"/rest/v1/system?path=//backends", "", "", "")
	wantEq(t, "auth", decode(t, body)["code"], any(json.Number("401")))
}

// HealthAction and BootstrapFinishAction need no auth.
func TestFERest_HealthAndBootstrap(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(3))
	_, body := connectorGet(t, s.FEURL()+"/api/health", "", "", "")
	wantEq(t, "health", body, `{"msg":"success","code":0,"data":{"total_backend_num":3,"online_backend_num":3},"count":0}`)
	_, body = connectorGet(t, s.FEURL()+"/api/bootstrap", "", "", "")
	wantEq(t, "bootstrap", body, `{"msg":"success","code":0,"data":{"replayedJournalId":0,"queryPort":0,"rpcPort":0,"arrowFlightSqlPort":0,"version":""},"count":0}`)
}

func TestSchemaPrimitiveType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][3]string{
		"INT": {"INT", "", ""}, "INTEGER": {"INT", "", ""}, "BOOL": {"BOOLEAN", "", ""},
		"DECIMAL(9,3)": {"DECIMAL32", "9", "3"}, "DECIMAL(18,0)": {"DECIMAL64", "18", "0"},
		"DECIMALV3(38,10)": {"DECIMAL128", "38", "10"}, "DECIMAL(76,2)": {"DECIMAL256", "76", "2"},
		"DECIMAL": {"DECIMAL32", "9", "0"}, "DECIMALV2(27,9)": {"DECIMALV2", "27", "9"},
		"CHAR(3)": {"CHAR", "", ""}, "ARRAY<INT>": {"ARRAY", "", ""}, "MAP<STRING,INT>": {"MAP", "", ""},
		"JSONB": {"JSON", "", ""}, "DATETIMEV1": {"DATETIME", "", ""}, "LARGEINT": {"LARGEINT", "", ""},
	} {
		typ, p, sc := schemaPrimitiveType(in)
		wantEq(t, in, [3]string{typ, p, sc}, want)
	}
}

// wantDeep is wantEq for values that are not comparable.
func wantDeep(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}
