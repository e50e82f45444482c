package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a scripted service: each request gets the next answer; the last
// one repeats.
type fake struct {
	mu       sync.Mutex
	answers  []func(w http.ResponseWriter)
	requests []*http.Request
	bodies   []string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	b, _ := io.ReadAll(r.Body)
	f.requests = append(f.requests, r)
	f.bodies = append(f.bodies, string(b))
	i := min(len(f.requests), len(f.answers)) - 1
	answer := f.answers[i]
	f.mu.Unlock()
	answer(w)
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func problem(status int, headers map[string]string, extra string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		typ := map[int]string{400: ProblemValidation, 401: ProblemUnauthorized, 413: ProblemTooLarge, 429: ProblemRateLimited, 502: ProblemUnavailable}[status]
		if typ == "" {
			typ = "about:blank"
		}
		fmt.Fprintf(w, `{"type":%q,"title":%q,"status":%d,"detail":"scripted","request_id":"req-%d"%s}`, typ, http.StatusText(status), status, status, extra)
	}
}

func ok(body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

const answerJSON = `{"response":"Fix the bottleneck first [framework:theory-of-constraints].","reasoning_trace":[],"rag_hits":[],"confidence":{"score":1,"level":"high","totalClaims":1,"verifiedClaims":1,"verdicts":[{"claim":"Fix the bottleneck first.","status":"verified","citations":["framework:theory-of-constraints"],"evidence":{"type":"framework","slug":"theory-of-constraints","snippet":"..."},"score":0.9,"reason":"the cited knowledge states it"}]}}`

// sleeps records the waits of a client instead of sleeping.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func fakeClient(t *testing.T, f *fake, opts ...Option) (*Client, *sleeps) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s := &sleeps{}
	c := New(srv.URL, append([]Option{WithAPIKey("sk_test"), WithSleep(s.sleep), WithRandom(func() float64 { return 0.5 })}, opts...)...)
	c.strict = true
	return c, s
}

// Test429WaitsRetryAfterThenSucceeds: a 429 with Retry-After: 1 is waited
// out (exactly one second, through the sleep hook) and the retry succeeds.
func Test429WaitsRetryAfterThenSucceeds(t *testing.T) {
	f := &fake{answers: []func(http.ResponseWriter){
		problem(429, map[string]string{"Retry-After": "1", "RateLimit": `"chat";r=0;t=1`, "RateLimit-Policy": `"chat";q=60;w=60`}, `,"retry_after_seconds":1`),
		ok(answerJSON),
	}}
	c, s := fakeClient(t, f)
	resp, err := c.Chat(context.Background(), ChatRequest{Message: "hello", Mode: ModeSupport})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Confidence.Level != "high" || resp.Confidence.Verdicts[0].Evidence.Slug != "theory-of-constraints" {
		t.Errorf("answer %+v", resp)
	}
	if !reflect.DeepEqual(s.waits, []time.Duration{time.Second}) || f.count() != 2 {
		t.Errorf("waits %v over %d requests, want [1s] over 2", s.waits, f.count())
	}
	for i, r := range f.requests {
		if r.Header.Get("Authorization") != "Bearer sk_test" || r.Header.Get("Content-Type") != "application/json" ||
			r.URL.Path != "/api/v1/chat" || f.bodies[i] != `{"message":"hello","mode":"support"}` {
			t.Errorf("request %d: %s %v %s", i, r.URL.Path, r.Header, f.bodies[i])
		}
	}
}

// Test502RetriedWithBackoffThenTypedError: a 502 is retried after capped,
// jittered exponential waits, and after the last attempt the typed error
// is returned.
func Test502RetriedWithBackoffThenTypedError(t *testing.T) {
	f := &fake{answers: []func(http.ResponseWriter){problem(502, map[string]string{"Retry-After": "5"}, "")}}
	c, s := fakeClient(t, f, WithRetry(RetryPolicy{MaxAttempts: 4, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond, Jitter: 0.5}))
	_, err := c.Verify(context.Background(), VerifyRequest{Text: "Queues grow."})
	var e *Error
	if !errors.As(err, &e) || !IsUnavailable(err) || e.StatusCode != 502 || e.Type != ProblemUnavailable || e.RequestID != "req-502" || e.RetryAfter != 5*time.Second {
		t.Fatalf("want a typed 502, got %#v", err)
	}
	// Backoffs 100, 200, 300 (capped) ms, each less a jitter of 0.5*0.5.
	want := []time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 225 * time.Millisecond}
	if !reflect.DeepEqual(s.waits, want) || f.count() != 4 {
		t.Errorf("waits %v over %d requests, want %v over 4", s.waits, f.count(), want)
	}
}

// TestNeverRetried: 400, 401 and 413 are returned at once, and so is any
// error of the endpoints that are not chat or verify.
func TestNeverRetried(t *testing.T) {
	for _, status := range []int{400, 401, 413, 500, 503} {
		f := &fake{answers: []func(http.ResponseWriter){problem(status, nil, `,"errors":[{"message":"must not be empty","location":"body.message","value":""}]`), ok(answerJSON)}}
		c, s := fakeClient(t, f)
		_, err := c.Chat(context.Background(), ChatRequest{Message: " "})
		e, isErr := AsError(err)
		if !isErr || e.StatusCode != status || f.count() != 1 || len(s.waits) != 0 {
			t.Errorf("%d: %v after %d requests, waits %v", status, err, f.count(), s.waits)
		}
		if status == 400 && (!IsValidation(err) || e.Errors[0].Location != "body.message") {
			t.Errorf("400 details: %+v", e.Errors)
		}
		if IsRateLimited(err) || (status == 401) != IsUnauthorized(err) || (status == 413) != IsTooLarge(err) {
			t.Errorf("%d: helpers disagree", status)
		}
	}
	f := &fake{answers: []func(http.ResponseWriter){problem(502, nil, ""), ok(`{"resolved":[],"unresolved":[]}`)}}
	c, _ := fakeClient(t, f)
	if _, err := c.Resolve(context.Background(), []Token{{TypeFramework, "x"}}); !IsUnavailable(err) || f.count() != 1 {
		t.Errorf("resolve retried: %v, %d requests", err, f.count())
	}
}

// TestRetryLimits: retries off, a Retry-After over the maximum, a wait
// longer than the context's deadline and a context cancelled during the
// wait all return the 429 without another request.
func TestRetryLimits(t *testing.T) {
	limited := problem(429, map[string]string{"Retry-After": "30", "RateLimit": `"chat";r=0;t=30`}, `,"retry_after_seconds":30`)
	cases := []struct {
		name string
		opts []Option
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"without retries", []Option{WithoutRetries()}, nil},
		{"max attempts 1", []Option{WithRetry(RetryPolicy{MaxAttempts: 1})}, nil},
		{"over MaxRetryAfter", []Option{WithRetry(RetryPolicy{MaxRetryAfter: 10 * time.Second})}, nil},
		{"past the deadline", nil, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}},
	}
	for _, tc := range cases {
		f := &fake{answers: []func(http.ResponseWriter){limited, ok(answerJSON)}}
		c, s := fakeClient(t, f, tc.opts...)
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if tc.ctx != nil {
			ctx, cancel = tc.ctx()
		}
		_, err := c.Chat(ctx, ChatRequest{Message: "hi"})
		cancel()
		e, isErr := AsError(err)
		if !IsRateLimited(err) || !isErr || f.count() != 1 || len(s.waits) != 0 || e.RetryAfterSeconds != 30 {
			t.Errorf("%s: %v after %d requests, waits %v", tc.name, err, f.count(), s.waits)
			continue
		}
		if rl, ok := ParseRateLimit(e.RateLimit); !ok || rl != (RateLimitState{Policy: "chat", Remaining: 0, Reset: 30}) {
			t.Errorf("%s: RateLimit %q read as %+v", tc.name, e.RateLimit, rl)
		}
	}

	// Cancelled while waiting: both the 429 and the cancellation show.
	f := &fake{answers: []func(http.ResponseWriter){limited, ok(answerJSON)}}
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := fakeClient(t, f, WithSleep(func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }))
	_, err := c.Chat(ctx, ChatRequest{Message: "hi"})
	if !IsRateLimited(err) || !errors.Is(err, context.Canceled) || f.count() != 1 {
		t.Errorf("cancelled: %v after %d requests", err, f.count())
	}

	// No Retry-After header: the body's retry_after_seconds is waited.
	f = &fake{answers: []func(http.ResponseWriter){problem(429, nil, `,"retry_after_seconds":2`), ok(answerJSON)}}
	c, s := fakeClient(t, f)
	if _, err := c.Chat(context.Background(), ChatRequest{Message: "hi"}); err != nil || !reflect.DeepEqual(s.waits, []time.Duration{2 * time.Second}) {
		t.Errorf("body's retry_after_seconds: %v, waits %v", err, s.waits)
	}
}

// TestBackoffJitterBounds: with the real random source every wait lies in
// [backoff*(1-jitter), backoff] and never above MaxBackoff.
func TestBackoffJitterBounds(t *testing.T) {
	c := New("http://unused", WithRetry(RetryPolicy{BaseBackoff: time.Second, MaxBackoff: 5 * time.Second, Jitter: 0.3}))
	for attempt := 1; attempt <= 10; attempt++ {
		full := min(time.Second<<(attempt-1), 5*time.Second)
		for range 50 {
			if d := c.backoff(attempt); d > full || d < time.Duration(float64(full)*0.7) {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, time.Duration(float64(full)*0.7), full)
			}
		}
	}
}

func sse(events ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.Join(events, ""))
	}
}

// TestStreamFake: a 429 before the stream is retried; hop, delta and final
// events decode; an error event is yielded with its problem; a cut stream
// is ErrIncompleteStream.
func TestStreamFake(t *testing.T) {
	hop := "event: hop\ndata: {\"hop\":0,\"tool\":\"search_knowledge\",\"input_summary\":\"q\",\"result_summary\":\"r\"}\n\n"
	delta := "event: delta\ndata: {\"text\":\"Fix the bottleneck first [framework:theory-of-constraints].\"}\n\n"
	final := "event: final\ndata: " + answerJSON + "\n\n"
	f := &fake{answers: []func(http.ResponseWriter){problem(429, map[string]string{"Retry-After": "1"}, ""), sse(": comment\n\n", hop, delta, final)}}
	c, s := fakeClient(t, f)
	var names []string
	for ev, err := range c.ChatStream(context.Background(), ChatRequest{Message: "hi"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Name())
	}
	if strings.Join(names, ",") != "hop,delta,final" || len(s.waits) != 1 || f.requests[1].Header.Get("Accept") != "text/event-stream" {
		t.Errorf("events %v, waits %v", names, s.waits)
	}

	f = &fake{answers: []func(http.ResponseWriter){sse(hop, "event: error\ndata: {\"type\":\"urn:assistant:problem:unavailable\",\"title\":\"Bad Gateway\",\"status\":502,\"detail\":\"down\",\"request_id\":\"r1\"}\n\n", final)}}
	c, _ = fakeClient(t, f)
	names = nil
	var last error
	for ev, err := range c.ChatStream(context.Background(), ChatRequest{Message: "hi"}) {
		names = append(names, ev.Name())
		last = err
		if ee, isErr := ev.(ErrorEvent); isErr && (ee.Err.StatusCode != 502 || ee.Err.RequestID != "r1") {
			t.Errorf("error event %+v", ee.Err)
		}
	}
	if strings.Join(names, ",") != "hop,error" || !IsUnavailable(last) || f.count() != 1 {
		t.Errorf("events %v, last error %v", names, last)
	}

	f = &fake{answers: []func(http.ResponseWriter){sse(hop, delta)}}
	c, _ = fakeClient(t, f)
	last = nil
	for _, err := range c.ChatStream(context.Background(), ChatRequest{Message: "hi"}) {
		last = err
	}
	if !errors.Is(last, ErrIncompleteStream) {
		t.Errorf("cut stream: %v", last)
	}
}

// TestErrorWithoutProblem: a non-problem error body still gives an *Error
// with the status, the raw body and the request id header.
func TestErrorWithoutProblem(t *testing.T) {
	f := &fake{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("X-Request-Id", "abc")
		w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
		http.Error(w, "upstream proxy says no", http.StatusBadGateway)
	}}}
	c, _ := fakeClient(t, f, WithoutRetries())
	_, err := c.Chat(context.Background(), ChatRequest{Message: "hi"})
	e, isErr := AsError(err)
	if !isErr || e.StatusCode != 502 || e.RequestID != "abc" || !strings.Contains(string(e.Body), "upstream proxy") || e.RetryAfter <= 0 || e.RetryAfter > 3*time.Second {
		t.Fatalf("%#v", err)
	}
	if !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Errorf("message %q", err.Error())
	}
}

// TestDefaultRetryPolicyIsAValue: the default is a fresh value on every
// call; changing one changes no client.
func TestDefaultRetryPolicyIsAValue(t *testing.T) {
	p := DefaultRetryPolicy()
	p.MaxAttempts = 99
	if got := DefaultRetryPolicy().MaxAttempts; got != 3 {
		t.Errorf("DefaultRetryPolicy().MaxAttempts = %d after changing a copy, want 3", got)
	}
	if got := New("http://assistant.test").retry; got != DefaultRetryPolicy() {
		t.Errorf("a new client's policy %+v, want the default %+v", got, DefaultRetryPolicy())
	}
}
