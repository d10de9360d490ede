package doris

import (
	"net/url"
	"strings"
)

// apiURL returns base with the path /seg[0]/seg[1]/..., each segment
// escaped on its own: a "/" stays inside its segment (%2F), and "." and
// ".." are sent as %2E, so no name can rewrite the request path
// (url.JoinPath would clean "/api/../x" to "/x").
func apiURL(base *url.URL, segs ...string) *url.URL {
	u := *base
	var p, raw strings.Builder
	for _, s := range segs {
		p.WriteString("/" + s)
		raw.WriteString("/" + escapeSegment(s))
	}
	u.Path, u.RawPath = p.String(), raw.String()
	return &u
}

func escapeSegment(s string) string {
	e := url.PathEscape(s)
	if strings.Trim(s, ".") == "" {
		e = strings.ReplaceAll(e, ".", "%2E")
	}
	return e
}
