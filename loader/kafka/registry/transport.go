package registry

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// DefaultMaxResponseBytes bounds one registry answer
// (records.schema_registry.max_response_bytes). A schema is at most about
// 1 MiB in a Confluent registry (one record of its _schemas topic,
// max.message.bytes); 16 MiB leaves room for long subject lists.
const DefaultMaxResponseBytes = 16 << 20

// ErrRedirectRefused is matched (errors.Is) by a redirect the client
// refused to follow: to another scheme, from https to http, or to a host
// that is not one of Config.URLs. Nothing was sent there; retrying does not
// help.
var ErrRedirectRefused = errors.New("schema registry redirect refused")

// ResponseTooLargeError is a registry answer longer than
// Config.MaxResponseBytes: it is refused, not truncated.
type ResponseTooLargeError struct {
	// Method and Path are the request's ("GET", "/schemas/ids/7").
	Method, Path string
	// Max is the bound in bytes.
	Max int64
}

// Error names the request, the bound and the key that raises it.
func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("schema registry answer to %s %s is longer than %d bytes (records.schema_registry.max_response_bytes)",
		e.Method, e.Path, e.Max)
}

// checkRedirect applies httptrust's rules to a redirect of a registry
// request: the scheme is kept or upgraded, and the host is the one of a
// configured URL (or the request's own, or both loopback). franz-go's sr
// sets Authorization on each request, and net/http keeps it on a
// same-host redirect even from https to http.
func checkRedirect(hosts []string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return fmt.Errorf("%w: stopped after 5 redirects", ErrRedirectRefused)
		}
		from := via[len(via)-1].URL
		refuse := func(reason string) error {
			return fmt.Errorf("%w: from %s to %s: %s", ErrRedirectRefused, from.Redacted(), req.URL.Redacted(), reason)
		}
		if err := httptrust.RedirectScheme(from, req.URL); err != nil {
			return refuse(err.Error())
		}
		to := req.URL.Hostname()
		if httptrust.SameHost(from.Hostname(), to) {
			return nil
		}
		for _, h := range hosts {
			if httptrust.SameHost(h, to) {
				return nil
			}
		}
		return refuse(fmt.Sprintf("host %s is not one of records.schema_registry.urls", to))
	}
}

// urlHosts returns the host names of the configured URLs.
func urlHosts(urls []string) []string {
	var out []string
	for _, s := range urls {
		if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.Hostname() != "" {
			out = append(out, u.Hostname())
		}
	}
	return out
}

// capTransport bounds every response body at max bytes: an answer that
// announces a longer Content-Length is refused before it is read, and one
// that runs past the bound fails the read with a *ResponseTooLargeError
// (franz-go's sr reads answers whole with io.ReadAll).
type capTransport struct {
	rt  http.RoundTripper
	max int64
}

func (t capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tooLarge := &ResponseTooLargeError{Method: req.Method, Path: req.URL.Path, Max: t.max}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.max, err: tooLarge}
	return resp, nil
}

// cappedBody reads at most left bytes of rc; one more byte is err.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	err  error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err // the bytes past the bound are not returned
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
