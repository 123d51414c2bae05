// One request: the route table's path filled in, JSON in and out, the
// bearer token, the error body turned into *Error, and retries with
// jittered backoff where the route allows them (docs/API.md, Errors).
package jobd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// call is one request: its route, path parameters in order, query, body
// (marshalled to JSON unless nil) and whether it is safe to repeat.
type call struct {
	route   route
	params  []string
	query   url.Values
	body    any
	keyed   bool // the body carries an idempotency key (retryWithKey)
	noRetry bool // the caller retries itself (worker reports)
}

// answer is a successful response: status, headers, body.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (cl call) path() string {
	p := cl.route.path
	for _, v := range cl.params {
		i := strings.IndexByte(p, '{')
		j := strings.IndexByte(p, '}')
		if i < 0 || j < i {
			break
		}
		p = p[:i] + url.PathEscape(v) + p[j+1:]
	}
	return p
}

func (cl call) retryable() bool {
	if cl.noRetry {
		return false
	}
	switch cl.route.retry {
	case retryAlways:
		return true
	case retryWithKey:
		return cl.keyed
	}
	return false
}

// do sends the call, retrying network errors and 503 answers when the call
// is safe to repeat, and decodes a 2xx JSON body into out (when non-nil).
func (c *Client) do(ctx context.Context, cl call, out any) (*answer, error) {
	var body []byte
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return nil, fmt.Errorf("jobd: encoding the request body: %w", err)
		}
		body = b
	}
	tries := 1
	if cl.retryable() && c.retries > 0 {
		tries += c.retries
	}
	var err error
	for n := 0; n < tries; n++ {
		var a *answer
		a, err = c.once(ctx, cl, body)
		if err == nil {
			if out != nil && len(a.body) > 0 {
				if jerr := json.Unmarshal(a.body, out); jerr != nil {
					return a, fmt.Errorf("jobd: %s %s: decoding the answer: %w", cl.route.method, cl.path(), jerr)
				}
			}
			return a, nil
		}
		if n+1 == tries || !transient(err) || ctx.Err() != nil {
			break
		}
		if werr := sleepCtx(ctx, c.backoff(n, err)); werr != nil {
			return nil, err
		}
	}
	return nil, err
}

// transient says whether err is worth a retry on a route safe to repeat:
// a network error, a 503, a 504 commit_unknown (the write may have
// happened: only a repeat with the same idempotency key is safe, which the
// route table ensures) or a 429 (docs/API.md, Errors).
func transient(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusServiceUnavailable || e.Status == http.StatusGatewayTimeout ||
			e.Status == http.StatusTooManyRequests
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func (c *Client) backoff(n int, err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return jitter(n, c.base, c.cap)
}

// jitter is full-jitter backoff: random(0, min(cap, base × 2^n)).
func jitter(n int, base, cap time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < cap; i++ {
		d *= 2
	}
	if d > cap {
		d = cap
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int63n(int64(d) + 1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// once sends one copy of the request.
func (c *Client) once(ctx context.Context, cl call, body []byte) (*answer, error) {
	u := c.server + cl.path()
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.route.method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("jobd: %s %s: %w", cl.route.method, cl.path(), err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jobd: %s %s: %w", cl.route.method, cl.path(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("jobd: %s %s: reading the answer: %w", cl.route.method, cl.path(), err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return &answer{resp.StatusCode, resp.Header, data}, nil
	}
	return nil, errorOf(cl, resp, data)
}

// errorOf turns an error answer into *Error; a body that is not jobd's
// error object still gives the status and the body's start as message.
func errorOf(cl call, resp *http.Response, data []byte) *Error {
	e := &Error{Status: resp.StatusCode, Method: cl.route.method, Path: cl.path()}
	var env struct {
		Error struct {
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Field   *string `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message = env.Error.Code, env.Error.Message
		if env.Error.Field != nil {
			e.Field = *env.Error.Field
		}
	} else {
		e.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "_"))
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		e.Message = msg
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
