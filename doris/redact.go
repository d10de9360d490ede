package doris

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces what Redact removes.
const Redacted = "xxxxx"

var (
	// scheme:// up to the end of the authority; the userinfo is what comes
	// before its last '@'. The authority ends at / ? # or a line end, not at
	// a space or a quote: a password may hold both, and an FE's Location
	// embeds "user@cluster:password" (docs/doris-facts.md §1.2), so an unparseable
	// one is quoted raw by net/http.
	urlAuthority = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^/?#\r\n]*@`)
	// A word ending in '@': the userinfo of a scheme-less "user:pass@host"
	// (a Kafka broker, a registry URL written without http://) when it holds
	// a ':' (bareUserinfo). Words end at spaces, quotes, brackets and commas,
	// which is how Go prints values and lists.
	bareWordAt = regexp.MustCompile(`[^\s"'\x60\[\](){}<>,;]+@`)
	// Header lines and Go's printing of an http.Header map.
	secretHeader = regexp.MustCompile(`(?i)\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token)(["']?\s*[:=]\s*\[?)[^\r\n\]]*`)
	// A bare credential token.
	authToken = regexp.MustCompile(`(?i)\b(basic|bearer)\s+[A-Za-z0-9+/=._~\-]{6,}`)
	// Secrets in a query string or a form.
	secretParam = regexp.MustCompile(`(?i)([?&;\s](?:password|passwd|pwd|pass|token|secret|access_token|api_key)=)[^&\s#"']*`)
)

// Redact removes credentials from s: the userinfo of every URL
// (scheme://user:password@host becomes scheme://xxxxx@host), the value of
// Authorization, Proxy-Authorization, Cookie and similar headers, Basic and
// Bearer tokens, and password=, token= and secret= query parameters. The
// client passes every error and log line that could carry a URL or a header
// through it; the CLI uses it for its logs and config errors. It
// over-redacts rather than leak: text after a scheme:// up to the last '@'
// before the next / ? or # is treated as userinfo, and so is a word without
// a scheme that holds a ':' before its last '@' ("u:pass@host:9092" becomes
// "xxxxx@host:9092"; "user@host", without a password, is kept).
func Redact(s string) string {
	if strings.Contains(s, "@") {
		if strings.Contains(s, "://") {
			s = urlAuthority.ReplaceAllStringFunc(s, func(m string) string {
				i := strings.Index(m, "://")
				return m[:i+3] + Redacted + "@"
			})
		}
		s = bareWordAt.ReplaceAllStringFunc(s, bareUserinfo)
	}
	s = secretHeader.ReplaceAllString(s, "${1}${2}"+Redacted)
	s = authToken.ReplaceAllString(s, "${1} "+Redacted)
	s = secretParam.ReplaceAllString(s, "${1}"+Redacted)
	return s
}

// bareUserinfo redacts one bareWordAt match: a word holding ':' and no
// "://" (a URL's userinfo is urlAuthority's) before its '@'.
func bareUserinfo(m string) string {
	if strings.Contains(m, "://") || !strings.Contains(m, ":") {
		return m
	}
	return Redacted + "@"
}

// RedactURL is u.Redacted() with a password-bearing query removed too; nil
// is "".
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return Redact(u.Redacted())
}

// redactor is Redact plus the literal secrets one client holds (its
// password, in plain, URL-escaped and Basic forms), for text the generic
// patterns may miss (a password with '/' in a raw userinfo).
type redactor struct{ secrets []string }

// minSecretLen is the shortest password replaced literally: shorter ones
// would garble unrelated text (Redact's patterns still apply).
const minSecretLen = 4

func newRedactor(user, password string) redactor {
	var r redactor
	if len(password) >= minSecretLen {
		r.secrets = append(r.secrets, password, url.QueryEscape(password), url.PathEscape(password),
			url.UserPassword(user, password).String())
	}
	r.secrets = append(r.secrets, base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	return r
}

func (r redactor) string(s string) string {
	s = Redact(s)
	for _, sec := range r.secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

// error returns err unchanged when its text holds nothing to redact, else
// a redactedError carrying the redacted text. The original chain is
// dropped then: it quotes the secret (net/http quotes a malformed Location
// header line in full).
func (r redactor) error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.string(msg); red != msg {
		return &redactedError{msg: red}
	}
	return err
}

// redactedError is an error whose text was redacted; it does not unwrap
// (the original text held a secret).
type redactedError struct{ msg string }

func (e *redactedError) Error() string { return e.msg }

// RedactingHandler wraps h so that the message and every string and error
// attribute pass through Redact, and any other value whose text holds
// something to redact is replaced by its redacted text (other values are
// kept as they are, so a JSON handler still writes them as objects). The CLI wraps its
// logger with it; the client wraps Config.Logger with it (adding its own
// password) for its own and retryablehttp's logs.
func RedactingHandler(h slog.Handler) slog.Handler {
	if rh, ok := h.(redactingHandler); ok {
		return rh
	}
	return redactingHandler{h: h, r: redactor{}}
}

type redactingHandler struct {
	h slog.Handler
	r redactor
}

func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.h.Enabled(ctx, l)
}

func (h redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.string(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return redactingHandler{h: h.h.WithAttrs(red), r: h.r}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h: h.h.WithGroup(name), r: h.r}
}

func (h redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.string(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.string(x.Error()))
		case []byte:
			return slog.String(a.Key, h.r.string(string(x)))
		default:
			// Keep the value (a JSON handler marshals structs as objects)
			// unless its text holds something to redact.
			text := fmt.Sprint(x)
			if red := h.r.string(text); red != text {
				return slog.String(a.Key, red)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// withSecrets returns a logger whose handler redacts like RedactingHandler
// plus r's literal secrets.
func withSecrets(l *slog.Logger, r redactor) *slog.Logger {
	h := l.Handler()
	if rh, ok := h.(redactingHandler); ok {
		h = rh.h
	}
	return slog.New(redactingHandler{h: h, r: r})
}
