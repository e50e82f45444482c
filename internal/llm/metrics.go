package llm

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
)

// Metrics holds the Prometheus collectors of the model calls: calls,
// latency, errors, retries and tokens by provider and model, and the
// breakers' states. Labels are the provider's name, the model that
// answered (or was configured) and an outcome; never anything of the
// caller. A nil *Metrics records nothing.
type Metrics struct {
	calls   *prometheus.CounterVec
	errors  *prometheus.CounterVec
	latency *prometheus.HistogramVec
	tokens  *prometheus.CounterVec
	retries *prometheus.CounterVec
	reg     prometheus.Registerer
}

// NewMetrics registers the collectors with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_llm_calls_total",
			Help: "Model calls, by provider, model and outcome (ok, unavailable, misconfigured, canceled, error).",
		}, []string{"provider", "model", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_llm_errors_total",
			Help: "Model calls that failed, by provider, model and kind (unavailable, misconfigured, error); canceled calls are not errors.",
		}, []string{"provider", "model", "kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "assistant_llm_call_duration_seconds",
			Help:    "Time a model call took, retries included, by provider and model.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"provider", "model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_llm_tokens_total",
			Help: "Tokens the upstream reported, by provider, model and direction (input, output).",
		}, []string{"provider", "model", "direction"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_llm_retries_total",
			Help: "HTTP attempts the provider's SDK made again after a failed one, by provider.",
		}, []string{"provider"}),
		reg: reg,
	}
	reg.MustRegister(m.calls, m.errors, m.latency, m.tokens, m.retries)
	return m
}

// Instrument returns p with its calls counted and timed; a Streamer stays
// a Streamer. model is the configured model, the label of a call whose
// upstream named none.
func (m *Metrics) Instrument(p Provider, model string) Provider {
	if m == nil {
		return p
	}
	ip := &instrumented{Provider: p, m: m, model: model}
	if s, ok := p.(Streamer); ok {
		return &instrumentedStreamer{instrumented: ip, s: s}
	}
	return ip
}

type instrumented struct {
	Provider
	m     *Metrics
	model string
}

// Unwrap implements Wrapper.
func (p *instrumented) Unwrap() Provider { return p.Provider }

func (p *instrumented) Complete(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	resp, err := p.Provider.Complete(ctx, req)
	p.record(start, resp, err)
	return resp, err
}

type instrumentedStreamer struct {
	*instrumented
	s Streamer
}

func (p *instrumentedStreamer) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	start := time.Now()
	resp, err := p.s.Stream(ctx, req, onText)
	p.record(start, resp, err)
	return resp, err
}

func (p *instrumented) record(start time.Time, resp Response, err error) {
	model := resp.Usage.Model
	if model == "" {
		model = p.model
	}
	name := p.Name()
	result := outcome(err)
	p.m.calls.WithLabelValues(name, model, result).Inc()
	if result != "ok" && result != "canceled" {
		p.m.errors.WithLabelValues(name, model, result).Inc()
	}
	p.m.latency.WithLabelValues(name, model).Observe(time.Since(start).Seconds())
	if err == nil {
		p.m.tokens.WithLabelValues(name, model, "input").Add(float64(resp.Usage.InputTokens))
		p.m.tokens.WithLabelValues(name, model, "output").Add(float64(resp.Usage.OutputTokens))
	}
}

// outcome classifies a call's error: ok (nil), unavailable,
// misconfigured, canceled or error.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrMisconfigured):
		return "misconfigured"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

// Client returns c with a transport that counts the SDK's retries of
// provider: the OpenAI and Anthropic SDKs number each attempt in the
// X-Stainless-Retry-Count header.
func (m *Metrics) Client(provider string, c *http.Client) *http.Client {
	if m == nil || c == nil {
		return c
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	counted := *c
	counted.Transport = retryCounter{rt: rt, retries: m.retries.WithLabelValues(provider)}
	return &counted
}

type retryCounter struct {
	rt      http.RoundTripper
	retries prometheus.Counter
}

func (r retryCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if n := req.Header.Get("X-Stainless-Retry-Count"); n != "" && n != "0" {
		r.retries.Inc()
	}
	return r.rt.RoundTrip(req)
}

// WatchBreaker reports b's state as assistant_llm_breaker_state
// {provider}: 0 closed, 1 half-open, 2 open. It returns b.
func (m *Metrics) WatchBreaker(provider string, b *Breaker) *Breaker {
	if m == nil {
		return b
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "assistant_llm_breaker_state",
		Help:        "The model provider's circuit breaker: 0 closed, 1 half-open (probing), 2 open (failing fast).",
		ConstLabels: prometheus.Labels{"provider": provider},
	}, func() float64 {
		switch b.cb.State() {
		case gobreaker.StateOpen:
			return 2
		case gobreaker.StateHalfOpen:
			return 1
		}
		return 0
	}))
	return b
}
