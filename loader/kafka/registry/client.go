package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Defaults of Config fields.
const (
	// DefaultMaxWait bounds the backoff waits for one schema id before
	// the record is refused (records.schema_registry.max_wait).
	DefaultMaxWait = 30 * time.Second
	// DefaultBackoffMin doubles up to DefaultBackoffMax between tries.
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 10 * time.Second
	// DefaultRequestTimeout bounds one registry request.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultMaxSchemas bounds the schema ids (and, apart, the referenced
	// subject versions) whose outcome is cached (Config.MaxSchemas).
	DefaultMaxSchemas = 1000
	// MaxReferenceDepth bounds a schema's reference chain (a reference of a
	// reference ...) and MaxReferences the subject versions it references
	// in all: past either, the schema is refused (a *RecordError) before
	// anything compiles it.
	MaxReferenceDepth = 32
	MaxReferences     = 256
)

// Config configures a Client. URLs and SchemaType are required.
type Config struct {
	// URLs are the registry base URLs (records.schema_registry.urls),
	// tried in order on a connection failure.
	URLs []string
	// Username and Password are HTTP Basic credentials (empty: none).
	Username, Password string
	// Bearer is a bearer token (empty: none); not with Username.
	Bearer string
	// TLS is the TLS config of https URLs (nil: system roots).
	TLS *tls.Config
	// SchemaType is the type every schema id must have (sr.TypeAvro for
	// records.format avro, ...). A record written with another type is a
	// *RecordError.
	SchemaType sr.SchemaType
	// TimeZone renders timestamps (nil: UTC).
	TimeZone *time.Location
	// Validate checks each JSON Schema record against its schema
	// (DecoderOptions.Validate); a record that does not match is a
	// *RecordError.
	Validate bool
	// MaxRowBytes bounds one row's JSON (DecoderOptions.MaxRowBytes; 0:
	// the decoders' default, 100 MiB).
	MaxRowBytes int
	// MaxSchemas bounds the cached schema ids and, apart, the cached
	// reference texts (0: DefaultMaxSchemas). A full cache forgets one
	// entry for each new one: a topic naming more distinct ids than that
	// costs a fetch per id it comes back to, never unbounded memory.
	MaxSchemas int
	// MaxWait bounds the sum of the backoff waits for one schema id: a
	// try whose wait would pass it is not made (0: DefaultMaxWait;
	// negative: no retry, the first failure refuses).
	MaxWait time.Duration
	// Attempts also bounds the tries per schema id (0: only MaxWait).
	Attempts int
	// BackoffMin and BackoffMax bound the wait between tries (0: the
	// defaults); it doubles from min to max.
	BackoffMin, BackoffMax time.Duration
	// RequestTimeout bounds one request (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Factories build decoders by schema type (nil: DefaultFactories).
	Factories map[sr.SchemaType]Factory
	// Sleep waits d or until ctx ends (nil: a timer). Tests inject one
	// that returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxResponseBytes bounds one registry answer; a longer one is a
	// *ResponseTooLargeError (0: DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// HTTPClient overrides the HTTP client (nil: one with RequestTimeout
	// and TLS). Its CheckRedirect is replaced by the client's redirect
	// rule and its Transport wrapped by the MaxResponseBytes bound; the
	// value passed is not changed.
	HTTPClient *http.Client
}

// Client fetches schemas by id, builds and caches their decoders. It is
// safe for concurrent use.
type Client struct {
	cfg     Config
	sr      *sr.Client
	factory Factory

	mu    sync.RWMutex
	byID  boundedMap[int, *entry]
	texts boundedMap[subjectVersion, sr.SubjectSchema]
}

// entry is the outcome of one schema id: a decoder, or the permanent
// reason none can be built.
type entry struct {
	dec Decoder
	err error
}

type subjectVersion struct {
	subject string
	version int
}

// New validates cfg and returns a Client. It does not contact the
// registry.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("records.schema_registry.urls: at least one registry URL is required")
	}
	if cfg.Bearer != "" && cfg.Username != "" {
		return nil, errors.New("records.schema_registry: set username/password or bearer, not both")
	}
	if cfg.Factories == nil {
		cfg.Factories = DefaultFactories()
	}
	f, ok := cfg.Factories[cfg.SchemaType]
	if !ok {
		return nil, fmt.Errorf("schema type %s: no decoder is built into this doris-sink", cfg.SchemaType)
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = DefaultBackoffMin
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.MaxSchemas <= 0 {
		cfg.MaxSchemas = DefaultMaxSchemas
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	var hc *http.Client
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cfg.TLS
		hc = &http.Client{Timeout: cfg.RequestTimeout, Transport: tr}
	}
	if hc.Transport == nil {
		hc.Transport = http.DefaultTransport
	}
	hc.Transport = capTransport{rt: hc.Transport, max: cfg.MaxResponseBytes}
	hc.CheckRedirect = checkRedirect(urlHosts(cfg.URLs))
	opts := []sr.ClientOpt{sr.URLs(append([]string(nil), cfg.URLs...)...), sr.HTTPClient(hc), sr.UserAgent("doris-sink")}
	if cfg.Username != "" || cfg.Password != "" {
		opts = append(opts, sr.BasicAuth(cfg.Username, cfg.Password))
	}
	if cfg.Bearer != "" {
		opts = append(opts, sr.BearerToken(cfg.Bearer))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry client: %w", err)
	}
	return &Client{cfg: cfg, sr: cl, factory: f, byID: newBoundedMap[int, *entry](cfg.MaxSchemas),
		texts: newBoundedMap[subjectVersion, sr.SubjectSchema](cfg.MaxSchemas)}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AppendJSON decodes one record value in the wire format and appends its
// row to dst. Errors: a *FetchError (errors.Is ErrUnavailable: refuse, do
// not dead-letter), a *RecordError (the record is bad), or ctx's error.
// On error dst is returned with its length unchanged.
func (c *Client) AppendJSON(ctx context.Context, dst, value []byte) ([]byte, error) {
	id, payload, err := ParseHeader(value)
	if err != nil {
		return dst, &RecordError{Err: err}
	}
	dec, err := c.Decoder(ctx, id)
	if err != nil {
		return dst, err
	}
	out, err := dec.AppendJSON(dst, payload)
	if err != nil {
		return dst, &RecordError{ID: id, Err: err}
	}
	return out, nil
}

// Subjects lists the registry's subjects, once, without retrying: a
// reachability check (doris-sink check).
func (c *Client) Subjects(ctx context.Context) ([]string, error) {
	s, err := c.sr.Subjects(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema registry %v: list subjects: %w", c.cfg.URLs, err)
	}
	return s, nil
}

// Decoder returns the decoder of schema id, fetching and compiling it on
// first use. The outcome is cached, a schema that cannot be compiled or
// has the wrong type as well (a *RecordError each time); a fetch failure
// (*FetchError, or ctx's error) is not cached: the next record asks again.
func (c *Client) Decoder(ctx context.Context, id int) (Decoder, error) {
	c.mu.RLock()
	e := c.byID.m[id]
	c.mu.RUnlock()
	if e == nil {
		s, err := c.fetch(ctx, id, func(ctx context.Context) (sr.Schema, error) { return c.sr.SchemaByID(ctx, id) })
		if err != nil {
			return nil, err
		}
		if e, err = c.build(ctx, id, s); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.byID.put(id, e)
		c.mu.Unlock()
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.dec, nil
}

// build compiles s into an entry; the error is a reference that could not
// be fetched (not cached).
func (c *Client) build(ctx context.Context, id int, s sr.Schema) (*entry, error) {
	if s.Type != c.cfg.SchemaType {
		return &entry{err: &RecordError{ID: id, Err: fmt.Errorf("the schema is %s, the job reads %s (records.format)", s.Type, c.cfg.SchemaType)}}, nil
	}
	refs := map[string]string{}
	if err := c.resolveRefs(ctx, id, s.References, refs, map[subjectVersion]bool{}, 1); err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			return &entry{err: err}, nil
		}
		return nil, err
	}
	dec, err := c.factory(s.Schema, refs, DecoderOptions{TimeZone: c.cfg.TimeZone, Validate: c.cfg.Validate, MaxRowBytes: c.cfg.MaxRowBytes})
	if err != nil {
		return &entry{err: &RecordError{ID: id, Err: fmt.Errorf("cannot compile the schema: %w", err)}}, nil
	}
	return &entry{dec: dec}, nil
}

// resolveRefs adds the text of every reference of schema id, and of their
// references, to out (name → schema). seen breaks reference cycles; depth
// is the chain's length so far (MaxReferenceDepth, MaxReferences).
func (c *Client) resolveRefs(ctx context.Context, id int, refs []sr.SchemaReference, out map[string]string, seen map[subjectVersion]bool, depth int) error {
	if len(refs) > 0 && depth > MaxReferenceDepth {
		return &RecordError{ID: id, Err: fmt.Errorf("schema references nest deeper than %d (a reference of a reference ...)", MaxReferenceDepth)}
	}
	for _, r := range refs {
		sv := subjectVersion{r.Subject, r.Version}
		if seen[sv] {
			continue
		}
		seen[sv] = true
		if len(seen) > MaxReferences {
			return &RecordError{ID: id, Err: fmt.Errorf("the schema references more than %d subject versions", MaxReferences)}
		}
		c.mu.RLock()
		ss, ok := c.texts.m[sv]
		c.mu.RUnlock()
		if !ok {
			s, err := c.fetch(ctx, id, func(ctx context.Context) (sr.Schema, error) {
				ss, err := c.sr.SchemaByVersion(ctx, r.Subject, r.Version)
				return ss.Schema, err
			})
			if err != nil {
				var fe *FetchError
				if errors.As(err, &fe) {
					fe.Err = fmt.Errorf("reference %q (subject %s version %d): %w", r.Name, r.Subject, r.Version, fe.Err)
				}
				return err
			}
			ss = sr.SubjectSchema{Subject: r.Subject, Version: r.Version, Schema: s}
			c.mu.Lock()
			c.texts.put(sv, ss)
			c.mu.Unlock()
		}
		out[r.Name] = ss.Schema.Schema
		if err := c.resolveRefs(ctx, id, ss.References, out, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// fetch calls get until it succeeds, with backoff, while the waits stay
// within MaxWait (and the tries within Attempts, when set). Every failure
// is retried (an outage, a 5xx, a 404 of an id whose registration is not
// visible yet) except credentials refused (401, 403), requests the
// registry calls invalid (422), a refused redirect and an answer over
// MaxResponseBytes, which no retry fixes; all of them end as a *FetchError.
func (c *Client) fetch(ctx context.Context, id int, get func(context.Context) (sr.Schema, error)) (sr.Schema, error) {
	wait := c.cfg.BackoffMin
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		s, err := get(ctx)
		if err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return sr.Schema{}, ctx.Err()
		}
		if !retriable(err) || (c.cfg.Attempts > 0 && attempt >= c.cfg.Attempts) || waited+wait > c.cfg.MaxWait {
			return sr.Schema{}, &FetchError{ID: id, Attempts: attempt, Err: err}
		}
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return sr.Schema{}, err
		}
		waited += wait
		wait = min(2*wait, c.cfg.BackoffMax)
	}
}

func retriable(err error) bool {
	var tl *ResponseTooLargeError
	if errors.Is(err, ErrRedirectRefused) || errors.As(err, &tl) {
		return false // the same answer would come back
	}
	var re *sr.ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity:
			return false
		}
	}
	return true
}
