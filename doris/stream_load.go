package doris

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// StreamLoad runs one Stream Load of body into req.DB.req.Table (§1).
//
// Without Config.BE, it first PUTs to an FE with "Expect: 100-continue" and
// a body that is never read, takes the FE's 307 Location, and then PUTs to
// that BE with Authorization re-added and the same headers (§1.2, §10);
// only the BE request reads body, which is streamed, never buffered whole.
// With Config.BE, it PUTs straight to a BE (round robin, or the one
// req.BESlot names). With Config.BESpread BESpreadBackends and a BESlot, it
// PUTs straight to that BE of the FE's /api/backends list (be_spread.go). A
// connection refused by an FE (or by a BE before any body byte was read)
// moves on to the next endpoint.
//
// Outcomes:
//   - Status Success or Publish Timeout (§2.2): the *LoadResult and nil. With
//     TwoPhaseCommit the txn (Result.TxnID) is PRECOMMITTED.
//   - Any other parsed answer (Fail, Label Already Exists, an FE refusal, a
//     non-200 status below 500): a *LoadError (Result set when the BE
//     answered) matching the sentinels (ErrLabelAlreadyExists,
//     ErrDataQuality, ErrRunningTxnQuota, ErrUnauthorized, ErrNotFound...).
//     The outcome is known.
//   - A success answer to a TwoPhaseCommit request whose TwoPhaseCommit is
//     not "true" (the header did not reach the BE): a *LoadError matching
//     ErrTwoPhaseCommitIgnored. The data is loaded and committed (Result).
//   - A transport failure once the BE request may have been sent (timeout,
//     reset, EOF, body read error, 5xx, unparseable answer): an error for
//     which IsAmbiguous is true. Look the label up.
//   - Anything before the BE request (validation, FE unreachable, FE
//     timeout): a plain error; nothing was begun.
//
// StreamLoad never retries: a labelled load re-sent could answer Label
// Already Exists, which the caller must resolve. The call is bounded by ctx
// and Config.LoadTimeout. If Doris answers before the body is consumed,
// StreamLoad returns without reading the rest; a body Read already in
// progress on the transport's goroutine may still complete after return.
// A Read that blocks (a pipe the caller feeds) is not interrupted by ctx:
// the transport waits for it, and StreamLoad with it. Callers streaming
// from a pipe must close it when ctx ends (the loader does).
func (c *Client) StreamLoad(ctx context.Context, req LoadRequest, body io.Reader) (*LoadResult, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	if c.isClosed() {
		return nil, errClosed
	}
	ctx, cancel := withTimeout(ctx, c.cfg.LoadTimeout)
	defer cancel()

	hdr := req.header(body != nil)
	path := []string{"api", req.DB, req.Table, "_stream_load"}
	lb := newLoadBody(&req, body)
	defer lb.detach()

	targets, err := c.spreadTargets(ctx, &req)
	if err != nil {
		return nil, err
	}
	if len(targets) > 0 {
		return c.spreadLoad(ctx, &req, hdr, path, targets, body != nil, lb)
	}
	if len(c.be) > 0 {
		start := int(c.nextBE.Add(1) - 1)
		var err error
		for i := range c.be {
			be := c.be[(start+i)%len(c.be)]
			target := apiURL(be, path...)
			var res *LoadResult
			res, err = c.putToBE(ctx, &req, hdr, target, body != nil, lb)
			var ns *notSentError
			if errors.As(err, &ns) && lb.n.Load() == 0 {
				c.log.Debug("stream load: BE refused connection, trying next", "be", RedactURL(be), "err", ns.err)
				continue
			}
			return res, err
		}
		return nil, err
	}

	target, err := c.redirect(ctx, &req, hdr, path)
	if err != nil {
		return nil, err
	}
	return c.putToBE(ctx, &req, hdr, target, body != nil, lb)
}

// notSentError is a transport error that proves the request never left.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// redirect asks the FEs, in order from a round-robin start, for the BE that
// takes this load: the 307 Location (§1.2). The FE request carries a gate
// body (never yields a byte) and Expect: 100-continue, so the caller's body
// is untouched. The step is bounded by Config.RequestTimeout.
func (c *Client) redirect(ctx context.Context, req *LoadRequest, hdr http.Header, path []string) (*url.URL, error) {
	start := int(c.nextFE.Add(1) - 1)
	var lastErr error
	for i := range c.fe {
		fe := c.fe[(start+i)%len(c.fe)]
		loc, err := c.redirectFrom(ctx, req, hdr, apiURL(fe, path...))
		var ns *notSentError
		if errors.As(err, &ns) {
			c.log.Debug("stream load: FE refused connection, trying next", "fe", RedactURL(fe), "err", ns.err)
			lastErr = err
			continue
		}
		return loc, err
	}
	return nil, fmt.Errorf("stream load %s.%s label %s: no FE reachable: %w", req.DB, req.Table, req.Label, lastErr)
}

func (c *Client) redirectFrom(ctx context.Context, req *LoadRequest, hdr http.Header, u *url.URL) (*url.URL, error) {
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	gate := newGateBody(ctx)
	defer gate.release()

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), gate)
	if err != nil {
		return nil, fmt.Errorf("stream load %s.%s: %w", req.DB, req.Table, err)
	}
	hreq.Header = hdr.Clone()
	hreq.Header.Set("Authorization", c.auth)
	hreq.Header.Set("Expect", "100-continue") // required by the FE (§1.2)
	hreq.Close = true                         // never reuse a connection whose request body was withheld
	hreq.ContentLength = -1
	if req.ContentLength > 0 {
		hreq.ContentLength = req.ContentLength
	}

	resp, err := c.load.Do(hreq)
	if err != nil {
		if notSent(err) {
			return nil, &notSentError{fmt.Errorf("stream load %s.%s: FE %s: %w", req.DB, req.Table, RedactURL(u), err)}
		}
		// The FE never begins a txn (§1.2): not ambiguous.
		return nil, fmt.Errorf("stream load %s.%s label %s: FE %s: %w", req.DB, req.Table, req.Label, RedactURL(u), err)
	}
	if resp.StatusCode == http.StatusTemporaryRedirect {
		resp.Body.Close()
		loc, err := resp.Location() // without userinfo, see scrubLocation
		if err != nil {
			return nil, fmt.Errorf("stream load %s.%s: FE %s: 307 without a valid Location: %w", req.DB, req.Table, RedactURL(u), err)
		}
		loc.User = nil // the FE's userinfo is never used: Authorization is set from Config
		c.log.Debug("stream load redirected", "fe", RedactURL(u), "be", RedactURL(loc), "label", req.Label)
		op := fmt.Sprintf("stream load %s.%s label %s", req.DB, req.Table, req.Label)
		if err := c.allowRedirect(ctx, op, u, loc); err != nil {
			return nil, err
		}
		return loc, nil
	}
	body, rerr := readAnswer(resp)
	le := &LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: -1}
	if resp.StatusCode != http.StatusOK {
		le.Status, le.Message = fmt.Sprintf("HTTP %d", resp.StatusCode), snippet(body)
		return nil, le
	}
	if rerr != nil {
		return nil, fmt.Errorf("stream load %s.%s: FE %s: %w", req.DB, req.Table, RedactURL(u), rerr)
	}
	a, err := decodeFEAnswer(body)
	if err != nil {
		return nil, fmt.Errorf("stream load %s.%s: FE %s: %w", req.DB, req.Table, RedactURL(u), err)
	}
	le.Status, le.Message = a.refusal()
	return nil, le
}

// putToBE sends the load to a BE and interprets its answer.
func (c *Client) putToBE(ctx context.Context, req *LoadRequest, hdr http.Header, target *url.URL, hasBody bool, lb *loadBody) (*LoadResult, error) {
	var rb io.Reader = http.NoBody
	if hasBody {
		rb = lb.bodyReader()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPut, target.String(), rb)
	if err != nil {
		return nil, fmt.Errorf("stream load %s.%s: %w", req.DB, req.Table, err)
	}
	hreq.Header = hdr.Clone()
	hreq.Header.Set("Authorization", c.auth) // re-added: Go drops it across hosts (§10)
	switch {
	case !hasBody:
		hreq.ContentLength = 0
	case req.ContentLength > 0:
		hreq.ContentLength = req.ContentLength
		hreq.Header.Set("Expect", "100-continue")
	default:
		hreq.ContentLength = -1 // chunked
		hreq.Header.Set("Expect", "100-continue")
	}

	op := fmt.Sprintf("stream load %s.%s label %s to %s", req.DB, req.Table, req.Label, RedactURL(target))
	resp, err := c.load.Do(hreq)
	if err != nil {
		if isAddressRefusal(err) {
			return nil, addressRefusal(op, err) // nothing was sent: not ambiguous, not skipped
		}
		if notSent(err) && lb.n.Load() == 0 {
			return nil, &notSentError{fmt.Errorf("%s: %w", op, err)}
		}
		// Headers alone begin the txn on the BE (§1.5): ambiguous.
		return nil, &ambiguousError{op: op, err: err}
	}
	lb.detach() // the answer is in: stop feeding the body
	body, rerr := readAnswer(resp)
	if resp.StatusCode >= 500 {
		return nil, &ambiguousError{op: op, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(body))}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: -1,
			Status: fmt.Sprintf("HTTP %d", resp.StatusCode), Message: snippet(body)}
	}
	if rerr != nil {
		return nil, &ambiguousError{op: op, err: rerr}
	}
	res, err := decodeLoadResult(bytes.NewReader(body))
	if err != nil {
		return nil, &ambiguousError{op: op, err: fmt.Errorf("%w: %q", err, snippet(body))}
	}
	if res.Succeeded() && req.TwoPhaseCommit && res.TwoPhaseCommit != "true" {
		// Loaded and committed without 2PC (§2.1 echoes the header): e.g. a
		// proxy dropped the underscore header. Not a precommit.
		return nil, &LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: res.TxnID,
			Status: res.Status, Message: fmt.Sprintf("two_phase_commit: true was sent but the answer has TwoPhaseCommit %q "+
				"(GroupCommit %t): the load is committed; does a proxy drop headers with underscores?", res.TwoPhaseCommit, res.GroupCommit),
			Result: res}
	}
	if res.Succeeded() {
		return res, nil
	}
	return nil, &LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: res.TxnID,
		Status: res.Status, Message: res.Message, Result: res}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
