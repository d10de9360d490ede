package doris

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// callState records, across the retries of one small call, whether any
// attempt may have reached Doris (for IsAmbiguous).
type callState struct {
	op        string // for a redirect refusal
	maybeSent atomic.Bool
}

type callStateKey struct{}

// newSmallClient builds the retrying client for small idempotent calls: it
// retries connection errors and 5xx with bounded exponential backoff,
// rotates to the next FE on each retry, and follows 307 (FE → BE for 2PC,
// §3.1; FE → master for get_load_state, §6.1) re-adding Authorization when
// allowRedirect trusts the target (a refusal is not retried).
func (c *Client) newSmallClient(rt http.RoundTripper) *retryablehttp.Client {
	hc := &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			req.URL.User = nil // never rely on (or leak) the userinfo Doris puts in Location
			req.Header.Del("Authorization")
			op := "request"
			if st, ok := req.Context().Value(callStateKey{}).(*callState); ok {
				op = st.op
			}
			from := via[len(via)-1].URL
			if err := c.allowRedirect(req.Context(), op, from, req.URL); err != nil {
				return err
			}
			req.Header.Set("Authorization", c.auth)
			c.log.Debug("doris redirect", "from", RedactURL(from), "to", RedactURL(req.URL))
			return nil
		},
	}
	return &retryablehttp.Client{
		HTTPClient:   hc,
		Logger:       newRetryLogger(c.log),
		RetryWaitMin: 100 * time.Millisecond,
		RetryWaitMax: 2 * time.Second,
		RetryMax:     c.cfg.MaxRetries,
		Backoff:      retryablehttp.DefaultBackoff,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if isRedirectRefusal(err) || isAddressRefusal(err) {
				return false, nil // nothing was sent to the target; a retry would be refused again
			}
			if st, ok := ctx.Value(callStateKey{}).(*callState); ok {
				if (err != nil && !notSent(err)) || (resp != nil && resp.StatusCode >= 500) {
					st.maybeSent.Store(true)
				}
			}
			return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
		},
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		PrepareRetry: func(req *http.Request) error {
			if len(c.fe) < 2 {
				return nil
			}
			for i, fe := range c.fe {
				if fe.Host == req.URL.Host && fe.Scheme == req.URL.Scheme {
					next := c.fe[(i+1)%len(c.fe)]
					u := *req.URL
					u.Scheme, u.Host = next.Scheme, next.Host
					req.URL, req.Host = &u, ""
					break
				}
			}
			return nil
		},
	}
}

// smallAnswer is a small call's final HTTP answer.
type smallAnswer struct {
	status int
	body   []byte
}

// doSmall sends method /path[0]/path[1]...?query (each segment escaped,
// apiURL) to an FE with hdr and Authorization, with retries. For mutating calls, a transport error after a possible send,
// a final 5xx, or a final non-200 after an earlier attempt that may have
// been applied is an ambiguous error.
func (c *Client) doSmall(ctx context.Context, op, method string, path []string, query url.Values, hdr http.Header, mutating bool) (*smallAnswer, error) {
	if c.isClosed() {
		return nil, errClosed
	}
	st := &callState{op: op}
	ctx = context.WithValue(ctx, callStateKey{}, st)
	fe := c.fe[int(c.nextFE.Add(1)-1)%len(c.fe)]
	u := apiURL(fe, path...)
	u.RawQuery = query.Encode()
	req, err := retryablehttp.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", c.auth)
	resp, err := c.small.Do(req)
	if err != nil {
		err = fmt.Errorf("%s via %s: %w", op, RedactURL(u), err)
		if mutating && st.maybeSent.Load() {
			return nil, &ambiguousError{op: op, err: err}
		}
		return nil, err
	}
	body, rerr := readAnswer(resp)
	// A final non-200 is no Doris answer about the txn (§8: Doris answers
	// 200): after an earlier attempt that may have been applied, or when it
	// is a 5xx, the outcome of a mutating call is unknown.
	if rerr != nil || resp.StatusCode >= 500 || (mutating && resp.StatusCode != http.StatusOK && st.maybeSent.Load()) {
		if rerr == nil {
			rerr = fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(body))
		}
		err = fmt.Errorf("%s via %s: %w", op, RedactURL(u), rerr)
		if mutating {
			return nil, &ambiguousError{op: op, err: err}
		}
		return nil, err
	}
	return &smallAnswer{status: resp.StatusCode, body: body}, nil
}
