package api

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
)

// metrics holds the Prometheus collectors of the HTTP surface and of what
// it serves: requests, limiter decisions, MCP calls, chat turns, the
// build and the knowledge base. No label carries a key id, a workspace
// or anything else a caller chooses: routes are patterns, MCP tools are
// the served ones.
type metrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	limiter   *prometheus.CounterVec
	mcpCalls  *prometheus.CounterVec
	turns     *prometheus.CounterVec
	declines  *prometheus.CounterVec
	firstText *prometheus.HistogramVec
}

func (s *Server) newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "assistant_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		limiter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_limiter_decisions_total",
			Help: "Rate-limit decisions, by limiter (public, key, auth_failures) and outcome (allowed, soft, refused, error: admitted because the limiter could not decide).",
		}, []string{"limiter", "outcome"}),
		mcpCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_mcp_calls_total",
			Help: "MCP calls, by JSON-RPC method, tool (tools/call only) and outcome (ok, error).",
		}, []string{"method", "tool", "outcome"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_chat_turns_total",
			Help: "Chat turns answered, by persona mode and confidence level (high, medium, low, none); failed turns have level error.",
		}, []string{"mode", "level"}),
		declines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "assistant_chat_declines_total",
			Help: "Chat turns answered without citing anything (the persona declined), by mode.",
		}, []string{"mode"}),
		firstText: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "assistant_chat_first_delta_seconds",
			Help:    "Time from the start of a streamed chat turn to its first answer text, by mode.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"mode"}),
	}
	reg.MustRegister(m.requests, m.latency, m.limiter, m.mcpCalls, m.turns, m.declines, m.firstText)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "assistant_build_info",
		Help:        "Always 1; the labels name the running build.",
		ConstLabels: prometheus.Labels{"version": s.Version, "goversion": runtime.Version()},
	}, func() float64 { return 1 }))
	if s.Knowledge != nil {
		reg.MustRegister(&knowledgeCollector{k: s.Knowledge})
	}
	return m
}

// limit counts one decision of limiter.
func (m *metrics) limit(limiter string, d assistant.Decision, err error) {
	if m == nil {
		return
	}
	outcome := "allowed"
	switch {
	case err != nil:
		outcome = "error"
	case !d.Allowed:
		outcome = "refused"
	case d.OverSoft:
		outcome = "soft"
	}
	m.limiter.WithLabelValues(limiter, outcome).Inc()
}

// turn counts a chat turn's outcome.
func (m *metrics) turn(mode string, resp chat.Response, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.turns.WithLabelValues(mode, "error").Inc()
		return
	}
	m.turns.WithLabelValues(mode, resp.Confidence.Level).Inc()
	if len(resp.RagHits) == 0 {
		m.declines.WithLabelValues(mode).Inc()
	}
}

// timedEvents passes a streamed turn's events on and observes the time
// to its first answer text.
type timedEvents struct {
	chat.Events
	once  sync.Once
	start time.Time
	now   func() time.Time
	obs   prometheus.Observer
}

func (e *timedEvents) Delta(text string) {
	e.once.Do(func() { e.obs.Observe(e.now().Sub(e.start).Seconds()) })
	e.Events.Delta(text)
}

// knowledgeCollector reports the knowledge base at each scrape: its
// entities by type and its version counter.
type knowledgeCollector struct {
	k assistant.KnowledgeStore
}

var (
	knowledgeEntitiesDesc = prometheus.NewDesc("assistant_knowledge_entities", "Citable knowledge entities, by type.", []string{"type"}, nil)
	knowledgeVersionDesc  = prometheus.NewDesc("assistant_knowledge_version", "The knowledge base's version counter: it moves with every change of the entities.", nil, nil)
)

func (c *knowledgeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- knowledgeEntitiesDesc
	ch <- knowledgeVersionDesc
}

func (c *knowledgeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if st, err := c.k.KnowledgeStats(ctx); err == nil {
		for typ, n := range map[string]int{"framework": st.Frameworks, "paper": st.Papers, "blog": st.Blogs} {
			ch <- prometheus.MustNewConstMetric(knowledgeEntitiesDesc, prometheus.GaugeValue, float64(n), typ)
		}
	} else {
		ch <- prometheus.NewInvalidMetric(knowledgeEntitiesDesc, err)
	}
	if v, err := c.k.KnowledgeVersion(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(knowledgeVersionDesc, prometheus.GaugeValue, float64(v))
	} else {
		ch <- prometheus.NewInvalidMetric(knowledgeVersionDesc, err)
	}
}
