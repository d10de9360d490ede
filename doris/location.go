package doris

import (
	"net/http"
	"net/url"
)

// scrubLocation wraps the client's transport: a Doris FE's 307 Location
// embeds user:password (§1.2), and net/http quotes a Location it cannot
// parse verbatim in its error. scrubLocation removes the userinfo from
// every Location before an http.Client sees it, and drops a Location it
// cannot parse (the redirect then fails without quoting it). A transport
// error whose text holds a secret (net/http quotes a malformed header line,
// a Location with its userinfo among them, before any http.Client code
// runs) is replaced by its redacted text (redactor.error), so neither the
// caller's error nor retryablehttp's log quotes it.
type scrubLocation struct {
	rt  http.RoundTripper
	red redactor
}

func (s scrubLocation) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if err != nil {
		return resp, s.red.error(err)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return resp, nil
	}
	u, perr := url.Parse(loc)
	switch {
	case perr != nil:
		resp.Header.Del("Location")
	case u.User != nil:
		u.User = nil
		resp.Header.Set("Location", u.String())
	}
	return resp, nil
}
