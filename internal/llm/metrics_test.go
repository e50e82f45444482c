package llm_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/constraintlab/assistant/internal/llm"
)

type fakeProvider struct {
	resp llm.Response
	err  error
}

func (p fakeProvider) Name() string { return "fake" }
func (p fakeProvider) Complete(context.Context, llm.Request) (llm.Response, error) {
	return p.resp, p.err
}

// The instrumented provider counts calls by outcome and the tokens the
// upstream reported, labelled by provider and the model that answered;
// the client counts the SDK's retries; the breaker's state is a gauge.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := llm.NewMetrics(reg)
	ok := m.Instrument(fakeProvider{resp: llm.Response{Usage: llm.Usage{Model: "m-1", InputTokens: 9, OutputTokens: 4, FinishReason: "stop"}}}, "configured")
	down := m.Instrument(fakeProvider{err: fmt.Errorf("%w: 503", llm.ErrUnavailable)}, "configured")
	for range 2 {
		ok.Complete(t.Context(), llm.Request{})
	}
	down.Complete(t.Context(), llm.Request{})
	b := m.WatchBreaker("fake", llm.NewBreaker("fake", nil))
	for range llm.BreakerFailures {
		b.Do(func() (llm.Response, error) { return llm.Response{}, llm.ErrUnavailable })
	}

	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	client := m.Client("fake", &http.Client{})
	for _, retry := range []string{"0", "1", "2"} {
		req, _ := http.NewRequest("GET", up.URL, nil)
		req.Header.Set("X-Stainless-Retry-Count", retry)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	want := `
# HELP assistant_llm_calls_total Model calls, by provider, model and outcome (ok, unavailable, misconfigured, canceled, error).
# TYPE assistant_llm_calls_total counter
assistant_llm_calls_total{model="configured",outcome="unavailable",provider="fake"} 1
assistant_llm_calls_total{model="m-1",outcome="ok",provider="fake"} 2
# HELP assistant_llm_tokens_total Tokens the upstream reported, by provider, model and direction (input, output).
# TYPE assistant_llm_tokens_total counter
assistant_llm_tokens_total{direction="input",model="m-1",provider="fake"} 18
assistant_llm_tokens_total{direction="output",model="m-1",provider="fake"} 8
# HELP assistant_llm_retries_total HTTP attempts the provider's SDK made again after a failed one, by provider.
# TYPE assistant_llm_retries_total counter
assistant_llm_retries_total{provider="fake"} 2
# HELP assistant_llm_breaker_state The model provider's circuit breaker: 0 closed, 1 half-open (probing), 2 open (failing fast).
# TYPE assistant_llm_breaker_state gauge
assistant_llm_breaker_state{provider="fake"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "assistant_llm_calls_total", "assistant_llm_tokens_total",
		"assistant_llm_retries_total", "assistant_llm_breaker_state"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}
