package client

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The retry paths against the real service: a real 429 waited out for its
// Retry-After, and a real 502 (the model provider unreachable) retried with
// a capped, jittered backoff and then returned as an *Error. retry_test.go
// checks the same paths, to the millisecond, against a scripted server.

// exchange is one request the recorder saw: when it was sent, when its
// answer came back, and what the answer said.
type exchange struct {
	path       string
	sent, got  time.Time
	status     int
	retryAfter string
	policy     string
}

// recorder is an http.RoundTripper that records every exchange.
type recorder struct {
	mu  sync.Mutex
	log []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.log = append(r.log, exchange{path: req.URL.Path, sent: sent, got: time.Now(), status: resp.StatusCode,
		retryAfter: resp.Header.Get("Retry-After"), policy: resp.Header.Get("RateLimit-Policy")})
	r.mu.Unlock()
	return resp, nil
}

// since returns the exchanges from number n on.
func (r *recorder) since(n int) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.log[n:]...)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// TestReal429WaitedOutThenAnswered: on a service that admits 2 chats per
// key in any rolling 3 seconds, chats are sent back to back until one
// meets the real 429. That call's client sleeps the Retry-After (for real,
// with the default sleep), sends again, and returns the 200 answer: the
// caller sees only the answer. The first calls normally take the whole
// budget, so the third meets the 429; on a slow machine the window may
// slide first, so up to 8 calls are made.
func TestReal429WaitedOutThenAnswered(t *testing.T) {
	svc := startLimited(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rec := &recorder{}
	c := New(svc.base, WithAPIKey(svc.key), WithHTTPClient(&http.Client{Transport: rec}),
		WithRetry(RetryPolicy{MaxAttempts: 3, MaxRetryAfter: 30 * time.Second}))
	c.strict = true
	req := ChatRequest{Message: packingQuestion, Vertical: "ecommerce", Source: "client-test"}
	for call := 1; call <= 8; call++ {
		before := rec.len()
		start := time.Now()
		resp, err := c.Chat(ctx, req)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("call %d: %v (requests %+v)", call, err, rec.since(before))
		}
		if len(FindTokens(resp.Response)) == 0 {
			t.Fatalf("call %d: an answer without citation tokens: %q", call, resp.Response)
		}
		ex := rec.since(before)
		if ex[0].status == http.StatusOK {
			if len(ex) != 1 {
				t.Fatalf("call %d: a 200 was sent again: %+v", call, ex)
			}
			continue
		}
		// The call that met the limit: 429, then 200 after the wait.
		if len(ex) != 2 || ex[0].status != http.StatusTooManyRequests || ex[1].status != http.StatusOK {
			t.Fatalf("call %d: want a 429 then a 200, got %+v", call, ex)
		}
		if want := `"chat";q=2;w=3`; ex[0].policy != want {
			t.Errorf("RateLimit-Policy %q, want %q", ex[0].policy, want)
		}
		secs, err := strconv.Atoi(ex[0].retryAfter)
		if err != nil || secs < 1 || time.Duration(secs)*time.Second > limitedWindow {
			t.Fatalf("Retry-After %q: want whole seconds from 1 to the 3 s window", ex[0].retryAfter)
		}
		retryAfter := time.Duration(secs) * time.Second
		// The client waited at least the Retry-After between the 429's
		// answer and the next request (a timer never fires early), and not
		// much longer: the bound is generous for a loaded machine.
		if wait := ex[1].sent.Sub(ex[0].got); wait < retryAfter || wait > retryAfter+20*time.Second {
			t.Errorf("waited %v after a Retry-After of %v", wait, retryAfter)
		}
		if took < retryAfter {
			t.Errorf("the call took %v, less than the Retry-After %v", took, retryAfter)
		}
		t.Logf("call %d met the 429 (Retry-After %v), waited %v and was answered; it took %v",
			call, retryAfter, ex[1].sent.Sub(ex[0].got), took)
		return
	}
	t.Fatalf("8 chats in a row never met the limit of %d per %v: %+v", limitedRate, limitedWindow, rec.since(0))
}

// TestReal502RetriedThenTypedError: with its model provider unreachable,
// the real service answers every chat 502 (after its own bounded retries
// upstream, D3). The client retries with a capped, jittered exponential
// backoff, MaxAttempts requests in all, and returns the last 502 as an
// *Error carrying the problem document. After 5 consecutive upstream
// failures the service's circuit breaker opens: it fails fast, still with
// 502 (never 503), so the client's behaviour does not change. The
// service's own metrics count the same attempts.
func TestReal502RetriedThenTypedError(t *testing.T) {
	svc := startDown(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rec := &recorder{}
	var mu sync.Mutex
	var waits []time.Duration
	policy := RetryPolicy{MaxAttempts: 4, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 150 * time.Millisecond, Jitter: 0.5}
	c := New(svc.base, WithAPIKey(svc.key), WithHTTPClient(&http.Client{Transport: rec}), WithRetry(policy),
		WithSleep(func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return sleepContext(ctx, d) // a real wait
		}))
	c.strict = true
	req := ChatRequest{Message: packingQuestion, Source: "client-test"}
	const chat502s = `assistant_http_requests_total{method="POST",route="POST /api/v1/chat",status="502"}`
	counted := metric(t, ctx, svc.base, chat502s)

	// Two calls of 4 attempts: 8 upstream failures, so the breaker opens
	// during the second call.
	for call := 1; call <= 2; call++ {
		before := rec.len()
		mu.Lock()
		waits = waits[:0]
		mu.Unlock()
		_, err := c.Chat(ctx, req)
		e, ok := AsError(err)
		if !ok || !IsUnavailable(err) || e.StatusCode != http.StatusBadGateway {
			t.Fatalf("call %d: want a typed 502, got %#v", call, err)
		}
		if e.Status != 502 || e.Type != ProblemUnavailable || e.Title != "Bad Gateway" || e.Detail == "" || e.RequestID == "" {
			t.Errorf("call %d: the problem document: %+v", call, e)
		}
		if e.RetryAfter != 5*time.Second || e.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("call %d: Retry-After %v, Content-Type %q", call, e.RetryAfter, e.Header.Get("Content-Type"))
		}
		ex := rec.since(before)
		if len(ex) != policy.MaxAttempts {
			t.Fatalf("call %d: %d requests, want %d: %+v", call, len(ex), policy.MaxAttempts, ex)
		}
		for i, x := range ex {
			if x.status != http.StatusBadGateway {
				t.Errorf("call %d attempt %d: status %d, want 502 (an open breaker is a 502 too)", call, i+1, x.status)
			}
		}
		// The backoff before retry n is min(100ms*2^(n-1), 150ms), less
		// up to half of it (the jitter).
		mu.Lock()
		got := append([]time.Duration(nil), waits...)
		mu.Unlock()
		if len(got) != policy.MaxAttempts-1 {
			t.Fatalf("call %d: waits %v", call, got)
		}
		for i, w := range got {
			full := min(policy.BaseBackoff<<i, policy.MaxBackoff)
			if w < full/2 || w > full {
				t.Errorf("call %d: wait %d is %v, want [%v, %v]", call, i+1, w, full/2, full)
			}
		}
		for i := 1; i < len(ex); i++ {
			if gap := ex[i].sent.Sub(ex[i-1].got); gap < got[i-1] {
				t.Errorf("call %d: retry %d sent %v after the 502, before its backoff of %v", call, i, gap, got[i-1])
			}
		}
	}

	// The breaker opened after the 5th upstream failure, and what followed
	// were 502s too (checked above).
	if log := svc.stderr.String(); !regexp.MustCompile(`circuit breaker state change.*"to":"open"`).MatchString(log) {
		t.Errorf("the service never logged its breaker opening:\n%s", log)
	}
	// The service counted every attempt as a 502 of the chat route.
	if n := metric(t, ctx, svc.base, chat502s) - counted; n != 2*policy.MaxAttempts {
		t.Errorf("the service counted %d chat 502s, want %d", n, 2*policy.MaxAttempts)
	}

	// A streamed turn has begun (200) before the model fails: the 502 is
	// an error event, sent once and not retried, as the same *Error.
	before := rec.len()
	var streamErr error
	for ev, err := range c.ChatStream(ctx, req) {
		if err != nil {
			streamErr = err
			if _, isErrEvent := ev.(ErrorEvent); !isErrEvent {
				t.Errorf("the failure came as %T, not an error event", ev)
			}
		}
	}
	if e, ok := AsError(streamErr); !ok || e.Status != 502 || e.Type != ProblemUnavailable {
		t.Errorf("stream: want a 502 error event, got %v", streamErr)
	}
	if ex := rec.since(before); len(ex) != 1 || ex[0].status != http.StatusOK {
		t.Errorf("stream: requests %+v, want one 200", ex)
	}
}

// metric reads one sample of the service's /metrics.
func metric(t *testing.T, ctx context.Context, base, series string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: %q", series, v)
			}
			return n
		}
	}
	return 0
}
