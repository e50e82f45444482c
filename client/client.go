package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultUserAgent is sent when no WithUserAgent option is given.
const DefaultUserAgent = "assistant-go-client/1"

// Client calls the assistant service. It is safe for concurrent use.
type Client struct {
	baseURL   string
	apiKey    string
	hc        *http.Client
	userAgent string
	retry     RetryPolicy
	sleep     func(ctx context.Context, d time.Duration) error
	now       func() time.Time
	random    func() float64
	strict    bool // decode with DisallowUnknownFields (the drift tests set it)
}

// Option configures a Client.
type Option func(*Client)

// RetryPolicy says how chat and verify calls are retried. Only two
// answers are retried: 429 (after the Retry-After the service sends) and
// 502 (after a capped, jittered exponential backoff). 400, 401, 413 and
// every other status are returned at once.
type RetryPolicy struct {
	// MaxAttempts is the number of requests made at most, the first one
	// included; 1 (or less) turns retries off.
	MaxAttempts int
	// BaseBackoff is the wait before the first retry of a 502; each later
	// retry waits twice as long as the one before, up to MaxBackoff.
	BaseBackoff time.Duration
	// MaxBackoff caps the backoff of 502 retries.
	MaxBackoff time.Duration
	// Jitter is the fraction (0 to 1) of each backoff that is randomised:
	// the wait is drawn from [backoff*(1-Jitter), backoff]. 0 waits the
	// backoff exactly.
	Jitter float64
	// MaxRetryAfter is the longest Retry-After of a 429 the client waits
	// out. A 429 asking for a longer wait is returned at once as an *Error
	// (waiting less than the service asks would only earn another 429).
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy returns the policy of a Client made without WithRetry
// or WithoutRetries: 3 attempts, backoff from 500ms doubling up to 8s with
// 50% jitter, and a Retry-After honoured up to 60s. It is a function, not
// a variable, so that no code can change the default of every client in
// the process; change one client's policy with WithRetry.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:   3,
		BaseBackoff:   500 * time.Millisecond,
		MaxBackoff:    8 * time.Second,
		Jitter:        0.5,
		MaxRetryAfter: 60 * time.Second,
	}
}

// WithAPIKey sets the key sent as "Authorization: Bearer KEY" on every
// request. The /api/v1/ endpoints (chat, verify, key) need one; the public
// endpoints ignore it.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient sets the *http.Client requests go through (timeouts,
// proxies, transports). The default is a client with no timeout: bound
// calls with their context.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithRetry sets the retry policy of chat and verify calls. Zero fields
// take the value of DefaultRetryPolicy, except Jitter, where 0 means none.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) {
		d := DefaultRetryPolicy()
		if p.MaxAttempts == 0 {
			p.MaxAttempts = d.MaxAttempts
		}
		if p.BaseBackoff <= 0 {
			p.BaseBackoff = d.BaseBackoff
		}
		if p.MaxBackoff <= 0 {
			p.MaxBackoff = d.MaxBackoff
		}
		if p.MaxRetryAfter <= 0 {
			p.MaxRetryAfter = d.MaxRetryAfter
		}
		p.Jitter = min(max(p.Jitter, 0), 1)
		c.retry = p
	}
}

// WithoutRetries turns retries off: every call makes one request and
// returns its error as it is.
func WithoutRetries() Option { return func(c *Client) { c.retry.MaxAttempts = 1 } }

// WithSleep replaces how the client waits between attempts. The function
// must return ctx.Err() if the context ends first. Tests use it to record
// waits without sleeping.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithClock replaces the clock the client reads to check that a wait
// still fits the context's deadline.
func WithClock(now func() time.Time) Option {
	return func(c *Client) {
		if now != nil {
			c.now = now
		}
	}
}

// WithRandom replaces the source of the backoff jitter: a function
// returning numbers in [0, 1).
func WithRandom(random func() float64) Option {
	return func(c *Client) {
		if random != nil {
			c.random = random
		}
	}
}

// New returns a client of the service at baseURL, such as
// "http://localhost:8080" (a trailing slash is ignored).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		baseURL:   strings.TrimRight(baseURL, "/"),
		hc:        &http.Client{},
		userAgent: DefaultUserAgent,
		retry:     DefaultRetryPolicy(),
		sleep:     sleepContext,
		now:       time.Now,
		random:    rand.Float64,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// request is one call: method, path (with query), JSON body, and whether
// it is retried.
type request struct {
	method  string
	path    string
	query   url.Values
	body    any
	accept  string
	prefer  string // the Prefer header, when set
	retried bool
}

// send makes the request, retrying per the policy, and returns the
// response of a 2xx answer; any other answer is an *Error.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("assistant: encoding the request: %w", err)
		}
	}
	attempts := 1
	if r.retried {
		attempts = max(1, c.retry.MaxAttempts)
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, r, payload)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		apiErr := errorFrom(resp)
		if attempt >= attempts {
			return nil, apiErr
		}
		wait, ok := c.retryWait(apiErr, attempt)
		if !ok {
			return nil, apiErr
		}
		if dl, has := ctx.Deadline(); has && c.now().Add(wait).After(dl) {
			return nil, apiErr // the wait would outlive the context
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, errors.Join(apiErr, err)
		}
	}
}

// retryWait says whether an error is retried after attempt (from 1) and
// how long to wait first.
func (c *Client) retryWait(e *Error, attempt int) (time.Duration, bool) {
	switch e.StatusCode {
	case http.StatusTooManyRequests:
		wait := e.RetryAfter
		if wait <= 0 && e.RetryAfterSeconds > 0 {
			wait = time.Duration(e.RetryAfterSeconds) * time.Second
		}
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		if wait > c.retry.MaxRetryAfter {
			return 0, false
		}
		return wait, true
	case http.StatusBadGateway:
		return c.backoff(attempt), true
	}
	return 0, false
}

// backoff is the capped, jittered exponential backoff before retry
// number attempt (from 1).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retry.BaseBackoff
	for i := 1; i < attempt && d < c.retry.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.retry.MaxBackoff)
	if j := c.retry.Jitter; j > 0 {
		d -= time.Duration(float64(d) * j * c.random())
	}
	return d
}

func (c *Client) once(ctx context.Context, r request, payload []byte) (*http.Response, error) {
	u := c.baseURL + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("assistant: %w", err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if r.prefer != "" {
		req.Header.Set("Prefer", r.prefer)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("assistant: %s %s: %w", r.method, r.path, err)
	}
	return resp, nil
}

// call sends the request and decodes a 2xx JSON body into out.
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return c.decode(resp.Body, out, r)
}

func (c *Client) decode(body io.Reader, out any, r request) error {
	dec := json.NewDecoder(body)
	if c.strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("assistant: decoding the answer of %s %s: %w", r.method, r.path, err)
	}
	return nil
}
