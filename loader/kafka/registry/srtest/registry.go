package srtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/sr"
)

// apiError is a registry error answer.
type apiError struct {
	status, code int
	msg          string
}

func (e *apiError) Error() string { return e.msg }

func errSubjectNotFound(s string) *apiError {
	return &apiError{404, 40401, fmt.Sprintf("Subject '%s' not found.", s)}
}
func errVersionNotFound(v string) *apiError {
	return &apiError{404, 40402, fmt.Sprintf("Version %s not found.", v)}
}
func errSchemaNotFound() *apiError    { return &apiError{404, 40403, "Schema not found"} }
func errInvalid(msg string) *apiError { return &apiError{422, 42201, msg} }

// stored is one schema, by id.
type stored struct {
	id     int
	schema sr.Schema
	// hide is how many more GET /schemas/ids/{id} answer 404.
	hide int
}

type version struct{ version, id int }

type subject struct {
	versions []version
	compat   *sr.CompatibilityLevel
}

// Registry is the registry state behind a Server, and its fault handles.
// It is an http.Handler; safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	schemas  []*stored // index id-1
	subjects map[string]*subject
	global   sr.CompatibilityLevel
	hideNew  int
	down     atomic.Bool
	// byIDHits counts GET /schemas/ids/{id} requests served, hidden (404)
	// ones included, not those refused while down.
	byIDHits atomic.Int64
	mux      *http.ServeMux
}

// NewRegistry returns an empty registry with global compatibility
// BACKWARD (the registry's default).
func NewRegistry() *Registry {
	r := &Registry{subjects: map[string]*subject{}, global: sr.CompatBackward, mux: http.NewServeMux()}
	r.routes()
	return r
}

// SetDown makes every request fail with HTTP 503 (true) or serves again
// (false): a registry outage.
func (r *Registry) SetDown(down bool) { r.down.Store(down) }

// HideNewIDs makes GET /schemas/ids/{id} of every schema registered after
// this call answer 404 (40403) for its first n calls: a new registration
// not yet visible where the consumer asks. 0 turns it off.
func (r *Registry) HideNewIDs(n int) {
	r.mu.Lock()
	r.hideNew = n
	r.mu.Unlock()
}

// SchemaByIDHits counts GET /schemas/ids/{id} requests answered so far
// (HideNewIDs 404s included; not the 503s of SetDown).
func (r *Registry) SchemaByIDHits() int64 { return r.byIDHits.Load() }

// Register registers s under subject as POST /subjects/{s}/versions does
// and returns its id (for tests that set the registry up directly).
func (r *Registry) Register(subj string, s sr.Schema) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.register(subj, s)
	if err != nil {
		return 0, err
	}
	return id, nil
}

func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.down.Load() {
		writeErr(w, &apiError{http.StatusServiceUnavailable, 50301, "srtest: registry down (SetDown fault)"})
		return
	}
	r.mux.ServeHTTP(w, req)
}

func (r *Registry) routes() {
	h := func(pattern string, fn func(*http.Request) (any, error)) {
		r.mux.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) {
			v, err := fn(req)
			if err != nil {
				writeErr(w, err)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			_ = json.NewEncoder(w).Encode(v)
		})
	}
	h("GET /schemas/ids/{id}", r.getSchemaByID)
	h("GET /schemas/ids/{id}/versions", r.getVersionsByID)
	h("GET /schemas/types", func(*http.Request) (any, error) { return []string{"JSON", "PROTOBUF", "AVRO"}, nil })
	h("GET /subjects", r.getSubjects)
	h("POST /subjects/{subject}", r.lookup)
	h("POST /subjects/{subject}/versions", r.postVersion)
	h("GET /subjects/{subject}/versions", r.getVersions)
	h("GET /subjects/{subject}/versions/{version}", r.getVersion)
	h("GET /config", func(*http.Request) (any, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return map[string]string{"compatibilityLevel": r.global.String()}, nil
	})
	h("PUT /config", r.putConfig)
	h("GET /config/{subject}", r.getSubjectConfig)
	h("PUT /config/{subject}", r.putConfig)
	h("POST /compatibility/subjects/{subject}/versions/{version}", r.checkCompat)
	h("POST /compatibility/subjects/{subject}/versions", r.checkCompat)
}

func writeErr(w http.ResponseWriter, err error) {
	ae, ok := err.(*apiError)
	if !ok {
		ae = &apiError{500, 50001, err.Error()}
	}
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(ae.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": ae.code, "message": ae.msg})
}

// schemaJSON is the wire form of a schema (schemaType omitted for AVRO, as
// the registry does).
type schemaJSON struct {
	Subject    string               `json:"subject,omitempty"`
	Version    int                  `json:"version,omitempty"`
	ID         int                  `json:"id,omitempty"`
	Schema     string               `json:"schema"`
	SchemaType string               `json:"schemaType,omitempty"`
	References []sr.SchemaReference `json:"references,omitempty"`
}

func wire(s sr.Schema) schemaJSON {
	j := schemaJSON{Schema: s.Schema, References: s.References}
	if s.Type != sr.TypeAvro {
		j.SchemaType = s.Type.String()
	}
	return j
}

func (r *Registry) getSchemaByID(req *http.Request) (any, error) {
	r.byIDHits.Add(1)
	id, err := strconv.Atoi(req.PathValue("id"))
	if err != nil {
		return nil, errSchemaNotFound()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < 1 || id > len(r.schemas) {
		return nil, errSchemaNotFound()
	}
	st := r.schemas[id-1]
	if st.hide > 0 {
		st.hide--
		return nil, errSchemaNotFound()
	}
	return wire(st.schema), nil
}

// getVersionsByID lists the subject-versions of a schema id (pkg/sr's
// CreateSchema reads it after registering).
func (r *Registry) getVersionsByID(req *http.Request) (any, error) {
	id, err := strconv.Atoi(req.PathValue("id"))
	if err != nil {
		return nil, errSchemaNotFound()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	type sv struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	out := []sv{}
	names := make([]string, 0, len(r.subjects))
	for n := range r.subjects {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range r.subjects[n].versions {
			if v.id == id {
				out = append(out, sv{n, v.version})
			}
		}
	}
	if len(out) == 0 {
		return nil, errSchemaNotFound()
	}
	return out, nil
}

func (r *Registry) getSubjects(*http.Request) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.subjects))
	for s, subj := range r.subjects {
		if len(subj.versions) > 0 {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (r *Registry) getVersions(req *http.Request) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	subj, ok := r.subjects[req.PathValue("subject")]
	if !ok || len(subj.versions) == 0 {
		return nil, errSubjectNotFound(req.PathValue("subject"))
	}
	out := []int{}
	for _, v := range subj.versions {
		out = append(out, v.version)
	}
	return out, nil
}

// versionOf returns the version named v ("latest", "-1" or a number).
func (r *Registry) versionOf(name, v string) (version, error) {
	subj, ok := r.subjects[name]
	if !ok || len(subj.versions) == 0 {
		return version{}, errSubjectNotFound(name)
	}
	if v == "latest" || v == "-1" {
		return subj.versions[len(subj.versions)-1], nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return version{}, &apiError{422, 42202, "The specified version '" + v + "' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""}
	}
	for _, ver := range subj.versions {
		if ver.version == n {
			return ver, nil
		}
	}
	return version{}, errVersionNotFound(v)
}

func (r *Registry) getVersion(req *http.Request) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.PathValue("subject")
	ver, err := r.versionOf(name, req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	j := wire(r.schemas[ver.id-1].schema)
	j.Subject, j.Version, j.ID = name, ver.version, ver.id
	return j, nil
}

// readSchema decodes a request body {"schema","schemaType","references"}.
func readSchema(req *http.Request) (sr.Schema, error) {
	var body struct {
		Schema     string               `json:"schema"`
		SchemaType string               `json:"schemaType"`
		References []sr.SchemaReference `json:"references"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		return sr.Schema{}, &apiError{400, 400, "Invalid request body: " + err.Error()}
	}
	s := sr.Schema{Schema: body.Schema, References: body.References, Type: sr.TypeAvro}
	if body.SchemaType != "" {
		if err := s.Type.UnmarshalText([]byte(strings.ToUpper(body.SchemaType))); err != nil {
			return sr.Schema{}, errInvalid("Invalid schema type " + body.SchemaType)
		}
	}
	if s.Schema == "" {
		return sr.Schema{}, errInvalid("Empty schema")
	}
	return s, nil
}

func (r *Registry) postVersion(req *http.Request) (any, error) {
	s, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.register(req.PathValue("subject"), s)
	if err != nil {
		return nil, err
	}
	return map[string]int{"id": id}, nil
}

func sameSchema(a, b sr.Schema) bool {
	return a.Type == b.Type && a.Schema == b.Schema && slices.Equal(a.References, b.References)
}

// register adds s to subject name (r.mu held).
func (r *Registry) register(name string, s sr.Schema) (int, error) {
	subj := r.subjects[name]
	if subj != nil {
		for _, v := range subj.versions {
			if sameSchema(r.schemas[v.id-1].schema, s) {
				return v.id, nil
			}
		}
	}
	if err := r.validate(s); err != nil {
		return 0, err
	}
	if subj != nil {
		if err := r.compatibleWithLevel(name, subj, s); err != nil {
			return 0, err
		}
	}
	id := 0
	for _, st := range r.schemas {
		if sameSchema(st.schema, s) {
			id = st.id
			break
		}
	}
	if id == 0 {
		id = len(r.schemas) + 1
		r.schemas = append(r.schemas, &stored{id: id, schema: s, hide: r.hideNew})
	}
	if subj == nil {
		subj = &subject{}
		r.subjects[name] = subj
	}
	next := 1
	if n := len(subj.versions); n > 0 {
		next = subj.versions[n-1].version + 1
	}
	subj.versions = append(subj.versions, version{version: next, id: id})
	return id, nil
}

func (r *Registry) lookup(req *http.Request) (any, error) {
	s, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.PathValue("subject")
	subj, ok := r.subjects[name]
	if !ok || len(subj.versions) == 0 {
		return nil, errSubjectNotFound(name)
	}
	for _, v := range subj.versions {
		if st := r.schemas[v.id-1]; sameSchema(st.schema, s) {
			j := wire(st.schema)
			j.Subject, j.Version, j.ID = name, v.version, v.id
			return j, nil
		}
	}
	return nil, errSchemaNotFound()
}

func (r *Registry) putConfig(req *http.Request) (any, error) {
	var body struct {
		Compatibility string `json:"compatibility"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		return nil, &apiError{400, 400, "Invalid request body: " + err.Error()}
	}
	var lvl sr.CompatibilityLevel
	if err := lvl.UnmarshalText([]byte(strings.ToUpper(body.Compatibility))); err != nil || body.Compatibility == "" {
		return nil, &apiError{422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if name := req.PathValue("subject"); name != "" {
		subj := r.subjects[name]
		if subj == nil {
			subj = &subject{} // the registry accepts a level for a subject without versions
			r.subjects[name] = subj
		}
		subj.compat = &lvl
	} else {
		r.global = lvl
	}
	return map[string]string{"compatibility": lvl.String()}, nil
}

func (r *Registry) getSubjectConfig(req *http.Request) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.PathValue("subject")
	if subj := r.subjects[name]; subj != nil && subj.compat != nil {
		return map[string]string{"compatibilityLevel": subj.compat.String()}, nil
	}
	if req.URL.Query().Get("defaultToGlobal") == "true" {
		return map[string]string{"compatibilityLevel": r.global.String()}, nil
	}
	return nil, &apiError{404, 40408, "Subject '" + name + "' does not have subject-level compatibility configured"}
}
