package api_test

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/retrieval"
)

// The public endpoints' handlers, middleware included, wired as serve
// wires them (knowledge read from the retrieval snapshot), without the
// network. Run with
//
//	go test ./internal/api -run '^$' -bench Public
func benchServer(b *testing.B) *api.Server {
	b.Helper()
	db, shared := loadedDB(b, time.Now)
	cat, dg := shared.catalog, shared.diagnoser
	ix := retrieval.NewIndex(db)
	return &api.Server{
		Knowledge: ix.Reader(db), Retriever: ix, Citations: db, Ready: db, Catalog: cat, Diagnosis: dg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now, Version: "bench",
		PublicLimiter: ratelimit.NewTiered(1e9, 1e9, time.Minute, time.Now), Metrics: prometheus.NewRegistry(),
	}
}

func benchRequest(b *testing.B, method, target, body string) {
	h := benchServer(b).Handler()
	for b.Loop() {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkPublicStats(b *testing.B) {
	benchRequest(b, "GET", "/api/assistant/v1/knowledge-stats", "")
}

var resolve20 = `{"tokens":[` + strings.TrimSuffix(strings.Repeat(`{"type":"framework","slug":"theory-of-constraints"},{"type":"framework","slug":"drum-buffer-rope"},{"type":"paper","slug":"little-1961-queuing-formula"},{"type":"framework","slug":"five-whys"},{"type":"framework","slug":"jobs-to-be-done"},`, 1), ",") + `,` +
	`{"type":"framework","slug":"value-stream-mapping"},{"type":"framework","slug":"cynefin"},{"type":"framework","slug":"customer-effort-score"},{"type":"framework","slug":"playing-to-win"},{"type":"framework","slug":"bullseye-traction-channels"},` +
	`{"type":"framework","slug":"generic-strategies"},{"type":"blog","slug":"graham-2014-the-fatal-pinch"},{"type":"paper","slug":"reichheld-sasser-1990-zero-defections"},{"type":"framework","slug":"customer-success"},{"type":"paper","slug":"akerlof-1970-market-for-lemons"},` +
	`{"type":"paper","slug":"bass-1969-new-product-growth"},{"type":"paper","slug":"barney-1991-firm-resources"},{"type":"paper","slug":"thaler-1985-mental-accounting"},{"type":"paper","slug":"stalk-1988-time-based-competition"},{"type":"paper","slug":"rochet-tirole-2003-two-sided-markets"}]}`

func BenchmarkPublicResolve20(b *testing.B) {
	benchRequest(b, "POST", "/api/assistant/v1/resolve", resolve20)
}

func BenchmarkPublicSearch(b *testing.B) {
	benchRequest(b, "GET", "/api/assistant/v1/search?q=orders+pile+up+at+the+packing+bench", "")
}

// BenchmarkPublicResolve20Varied resolves the 20 tokens of resolve20 in
// 2,000 orders in turn, more than the resolve memo keeps, so that no
// answer comes from memory (bench/load's resolve-varied row).
func BenchmarkPublicResolve20Varied(b *testing.B) {
	var refs []string
	inner := strings.TrimSuffix(strings.TrimPrefix(resolve20, `{"tokens":[`), `]}`)
	for _, r := range strings.SplitAfter(inner, "},") {
		refs = append(refs, strings.TrimSuffix(r, ","))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	bodies := make([]string, 2000)
	for i := range bodies {
		rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
		bodies[i] = `{"tokens":[` + strings.Join(refs, ",") + `]}`
	}
	h := benchServer(b).Handler()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/assistant/v1/resolve", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		i++
	}
}
