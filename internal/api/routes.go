package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/constraintlab/assistant/internal/chat"
)

// Paths of the public surface (interface.md section 4).
const (
	publicPrefix = "/api/assistant/v1"
	openAPIPath  = "/api/assistant/openapi.json"
	docsPath     = "/api/assistant/docs"
)

// maxBodyBytes bounds every request body of the API: a body of exactly
// maxBodyBytes is accepted (D4: "at most 256 KiB"), one byte more is 413.
const maxBodyBytes = 256 << 10

// humaBodyLimit is the MaxBodyBytes given to huma, which refuses a body
// that reaches its limit (not one that exceeds it).
const humaBodyLimit = maxBodyBytes + 1

// Handler returns the whole HTTP surface of the service.
func (s *Server) Handler() http.Handler {
	h, _ := s.handler()
	return h
}

// handler builds the surface and also returns the patterns it serves.
//
// Every request gets an id, a server span when tracing is on (tracing.go),
// and is observed (one log line, the HTTP metrics); then the path's prefix chooses its surface, and the surface's
// own chain, listed here outermost first, runs around its routes:
//
//	public     /api/assistant/  JSON bodies, problem documents, recoverer, CORS from any origin, per-client limit, public caching
//	components /components/     recoverer, CORS from any origin, public caching
//	v1         /api/v1/         JSON bodies, problem documents, recoverer, CORS from the configured origins, API key, no-store
//	openai     /api/v1/openai/  OpenAI's errors, JSON bodies, recoverer, CORS from the configured origins, API key, no-store
//	mcp        /mcp             recoverer, API key (the MCP guard and limits are the route's: mcp.go)
//	admin      /admin/          recoverer (the admin area has its own sessions and HTML errors)
//	ops        /healthz /readyz /metrics   recoverer
//	apiOther   the rest of /api/           JSON bodies, problem documents, recoverer, no-store: a 404 problem
//	other      everything else             recoverer: the mux's 404
//
// The per-key limit wraps the routes it counts (chat, verify, the
// completions); the resolve memo wraps resolve.
func (s *Server) handler() (http.Handler, []string) {
	rt := newRouter()
	s.metrics = s.newMetrics(s.Metrics)
	auth := s.newAuthenticator()
	keyLimit := func(writeErr errorWriter) func(http.Handler) http.Handler {
		return keyRateLimit(s.ChatLimiter, s.ChatRateLimit, s.ChatRateWindow, s.Logger, s.metrics, writeErr)
	}

	public := rt.surface(jsonBodies, problems, recoverer(s.Logger, writeProblem), corsAnyOrigin,
		publicRateLimit(s.PublicLimiter, s.TrustedProxies, s.Logger, s.metrics), publicCaching)
	components := rt.surface(recoverer(s.Logger, writeProblem), corsAnyOrigin, publicCaching)
	v1 := rt.surface(jsonBodies, problems, recoverer(s.Logger, writeProblem), corsFrom(s.CORSOrigins),
		auth.middleware(writeProblem), noStore)
	openai := rt.surface(openAIErrors, jsonBodies, recoverer(s.Logger, writeOpenAIProblem), corsFrom(s.CORSOrigins),
		auth.middleware(writeOpenAIProblem), noStore)
	mcpSurface := rt.surface(recoverer(s.Logger, writeProblem), auth.middleware(writeProblem))
	admin := rt.surface(recoverer(s.Logger, writeProblem))
	ops := rt.surface(recoverer(s.Logger, writeProblem))
	apiOther := rt.surface(jsonBodies, problems, recoverer(s.Logger, writeProblem), noStore)
	other := rt.surface(recoverer(s.Logger, writeProblem))

	rt.mount(public, "/api/assistant/")
	rt.mount(components, componentsPrefix)
	rt.mount(v1, "/api/v1/")
	rt.mount(openai, openAIPrefix, openAIPrefix+"/")
	rt.mount(mcpSurface, mcpPath)
	if s.Admin != nil {
		rt.mount(admin, "/admin", "/admin/")
	}
	rt.mount(ops, "/healthz", "/readyz", "/metrics")
	// The roots of the subtrees above without their slash are served as
	// they always were, not redirected.
	rt.mount(apiOther, "/api/", "/api/assistant", "/api/v1")
	rt.mount(other, "/", "/api", strings.TrimSuffix(componentsPrefix, "/"))

	// Answers to bodies seen before come from memory (resolvememo.go).
	public.wrap[http.MethodPost+" "+publicPrefix+"/resolve"] = s.rememberResolves
	// Preview bodies of the plain shape are read without huma (previewfast.go).
	public.wrap[http.MethodPost+" "+publicPrefix+"/preview"] = s.plainPreviews
	// Chat, verify and the completions share the key's budget (D22).
	v1.wrap[http.MethodPost+" /api/v1/chat"] = keyLimit(writeProblem)
	v1.wrap[http.MethodPost+" /api/v1/verify"] = keyLimit(writeProblem)
	openai.wrap[http.MethodPost+" "+openAIPrefix+"/chat/completions"] = keyLimit(writeOpenAIProblem)
	openai.wrap[http.MethodPost+" "+openAIPrefix+"/responses"] = keyLimit(writeOpenAIProblem)

	// One OpenAPI document for the operations of every surface.
	config := s.humaConfig()
	api := humago.New(public, config)

	// Public knowledge endpoints (no authentication).
	// Their security is an explicit empty requirement: "no authentication",
	// stated rather than left out, so linters and generators need not guess.
	publicOp := func(op huma.Operation) huma.Operation {
		op.Tags = []string{"Knowledge"}
		op.Security = []map[string][]string{}
		op.MaxBodyBytes = humaBodyLimit
		op.Errors = append(op.Errors, http.StatusTooManyRequests)
		return op
	}
	huma.Register(api, publicOp(huma.Operation{
		OperationID: "getKnowledgeStats", Method: http.MethodGet, Path: publicPrefix + "/knowledge-stats",
		Summary:     "Count the citable knowledge",
		Description: "Counts the entities the assistant can cite, by type. Cached for 60 seconds.",
	}), s.knowledgeStats)
	// resolve writes its answer from remembered card JSON (resolveJSON);
	// its documented schema is resolveOutput's, as if huma encoded it.
	huma.Register(api, publicOp(huma.Operation{
		OperationID: "resolveTokens", Method: http.MethodPost, Path: publicPrefix + "/resolve",
		Summary:     "Resolve citation tokens into cards",
		Description: "Turns 1 to 100 citation tokens into entity cards for hover cards, in request order, each once. Tokens that do not resolve are listed in `unresolved` with the reason; they are not an error.",
		Errors:      []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
		Responses:   jsonResponse(api, resolveOutput{}),
	}), s.resolveJSON)
	huma.Register(api, publicOp(huma.Operation{
		OperationID: "getLeaderboard", Method: http.MethodGet, Path: publicPrefix + "/leaderboard",
		Summary:     "Most cited knowledge",
		Description: "The entities cited by the most chat responses over the last `days` days, across all workspaces. Ties break by token.",
		Errors:      []int{http.StatusBadRequest},
	}), s.leaderboard)
	huma.Register(api, publicOp(huma.Operation{
		OperationID: "searchKnowledge", Method: http.MethodGet, Path: publicPrefix + "/search",
		Summary:     "Search the knowledge base",
		Description: "Ranked entity cards for a plain-language query: the same retrieval the assistant uses.",
		Errors:      []int{http.StatusBadRequest},
		Responses:   jsonResponse(api, searchOutput{}),
	}), s.searchJSON)
	huma.Register(api, publicOp(huma.Operation{
		OperationID: "getCatalog", Method: http.MethodGet, Path: publicPrefix + "/catalog",
		Summary:     "Verticals and constraint archetypes",
		Description: "The allowed ids of `vertical` and `archetype_id`, with names and descriptions.",
	}), s.catalog)
	s.registerPreview(api, publicOp)

	// Authenticated endpoints (a bearer API key; the workspace comes from it).
	api.OpenAPI().Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key: Authorization: Bearer sk_service_..."},
	}
	authenticated := func(op huma.Operation) huma.Operation {
		op.Security = []map[string][]string{{"bearer": {}}}
		op.MaxBodyBytes = humaBodyLimit
		op.Errors = append(op.Errors, http.StatusUnauthorized)
		return op
	}
	v1API := humago.New(v1, config)
	huma.Register(v1API, authenticated(huma.Operation{
		OperationID: "getCurrentKey", Method: http.MethodGet, Path: "/api/v1/key", Tags: []string{"Keys"},
		Summary:     "The key making this request",
		Description: "Describes the API key in the Authorization header: its id, workspace, name and expiry. Use it to check that a key works.",
	}), s.currentKey)

	chatOp := authenticated(huma.Operation{
		OperationID: "chat", Method: http.MethodPost, Path: "/api/v1/chat", Tags: []string{"Chat"},
		Summary: "One turn of the assistant",
		Description: "Answers a message in one of four personas, grounded in the knowledge base: the answer with citation tokens, " +
			"the tool calls made (reasoning_trace), the knowledge used (rag_hits) and a confidence verdict. " +
			"Send `Accept: text/event-stream` to stream the turn as server-sent events: `hop`, `delta`, `final` (the same object as the JSON form) or `error`. " +
			"Limited to 60 requests per rolling minute per key, a budget shared with POST /api/v1/verify; every response carries RateLimit headers.",
		Errors: []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusBadGateway},
		// A whole request, so the docs page's "try it out" starts from one
		// that works (huma adds the schema to this media type).
		RequestBody: jsonExample(map[string]any{
			"message": "Our packing station cannot keep up and orders ship late", "mode": "operator", "vertical": "ecommerce",
		}),
	})
	chatOp.Responses = map[string]*huma.Response{"200": {
		Description: "The answer (JSON), or the turn as a stream of server-sent events.",
		Content: map[string]*huma.MediaType{
			"application/json":  {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(chat.Response{}), true, "ChatResponse")},
			"text/event-stream": {Schema: &huma.Schema{Type: huma.TypeString, Description: "Events `hop` (a reasoning_trace item), `delta` ({text}), `final` (the chat response) and `error` (a problem document)."}},
		},
	}}
	if s.Chat != nil {
		if s.Async != nil {
			registerAsync(v1API, &chatOp, authenticated, s.getTurn)
		}
		huma.Register(v1API, chatOp, s.chatTurn)
	}
	if s.Verifier != nil {
		huma.Register(v1API, authenticated(huma.Operation{
			OperationID: "verify", Method: http.MethodPost, Path: "/api/v1/verify", Tags: []string{"Verify"},
			Summary: "Check any text against the knowledge base",
			Description: "Returns the confidence object that chat answers carry, for text produced anywhere: each claim (assertive sentence or list item) " +
				"is verified, unsupported or contradicted, with the passage that decided it. A claim is checked against the entities its own " +
				"[type:slug] tokens cite; a claim that cites nothing is checked against `citations`. A token that does not resolve makes its claim " +
				"unsupported and is never repeated. `threshold` sets the score a claim must reach to be verified. " +
				"With a remote model provider configured, the model judges the claims and the builtin checker is the fallback. " +
				"Shares the per-key limit of chat (60 requests per rolling minute, policy \"chat\"); every response carries RateLimit headers.",
			Errors: []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests},
			RequestBody: jsonExample(map[string]any{
				"text": "Waiting time explodes as utilization approaches one [paper:kingman-1961-heavy-traffic]. " +
					"Kingman published the heavy traffic result in 1973 [paper:kingman-1961-heavy-traffic].",
				"source": "docs",
			}),
		}), s.verifyText)
	}

	// The OpenAI-compatible facade over the chat turn (openai.go).
	if s.Chat != nil {
		s.registerOpenAI(humago.New(openai, config), authenticated)
	}

	// The webhook events (webhooks.go).
	documentWebhooks(api)

	// The OpenAPI document describes itself too, so every /api/ route is in it.
	api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "getOpenAPI", Method: http.MethodGet, Path: openAPIPath, Tags: []string{"Meta"},
		Summary:  "This OpenAPI 3.1 document",
		Security: []map[string][]string{},
		Responses: map[string]*huma.Response{"200": {
			Description: "The OpenAPI document.",
			Content:     map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}},
		}},
	})
	refineOpenAPI(api.OpenAPI())
	spec, err := json.Marshal(api.OpenAPI())
	if err != nil {
		panic(err) // the document is built from static declarations
	}
	public.HandleFunc("GET "+openAPIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(spec)
	})
	public.Handle("GET "+docsPath, docsHandler())
	public.Handle("GET "+docsPath+"/", docsHandler())
	components.Handle("GET "+componentsPrefix+"assistant-citations.js", componentHandler(citationsComponent))

	// The MCP server (mcp.go): its tools describe themselves over the
	// protocol, so it stays out of the OpenAPI document.
	mcpSurface.Handle("POST "+mcpPath, s.mcpHandler())

	// The admin area: pages for people, with their own sessions and
	// HTML errors (internal/admin).
	if s.Admin != nil {
		admin.Handle("/admin/", s.Admin)
		admin.Handle("GET /admin", http.RedirectHandler("/admin/integrations", http.StatusSeeOther))
	}

	// Operational endpoints, outside the OpenAPI document (D15).
	ops.HandleFunc("GET /healthz", s.healthz)
	ops.HandleFunc("GET /readyz", s.readyz)
	if !s.MetricsElsewhere {
		ops.Handle("GET /metrics", metricsToken(s.MetricsToken, s.MetricsHandler()))
	}

	outer := []func(http.Handler) http.Handler{requestID}
	if s.Tracing != nil {
		outer = append(outer, traceRequests(s.Tracing, rt.pattern))
	}
	outer = append(outer, observe(s.Logger, s.metrics, s.Now, rt.pattern, s.TrustedProxies))
	return chain(rt, outer...), rt.patterns
}

// humaConfig configures huma: OpenAPI 3.1 served by us (not by huma), no
// CDN-backed docs page, our problem documents, unknown JSON fields ignored
// (D4). The APIs of the surfaces share it, so they share one document.
func (s *Server) humaConfig() huma.Config {
	useProblemErrors()
	config := huma.DefaultConfig("Assistant Service API", s.Version)
	config.Info.Description = "The assistant service. With an API key (Authorization: Bearer): chat, one turn of the " +
		"assistant grounded in the knowledge base, as JSON or server-sent events; verify, which checks any text against " +
		"the knowledge base; and a description of the key itself. Without authentication, the public knowledge endpoints: " +
		"counts, hover-card resolution of citation tokens, search, the catalog of verticals and constraint archetypes, " +
		"the preview of an archetype's citations, and the citation leaderboard. " +
		"Errors are RFC 9457 problem documents (application/problem+json); invalid input is 400, never 422. " +
		"Request bodies are read as JSON whatever their Content-Type says (fetch's default text/plain included): a body that is not JSON is 400, and 415 is never answered. " +
		"Arrays are never null, and null is not accepted where an array is expected."
	// A relative server: the paths are absolute, and "/" resolves against
	// wherever the document was fetched from, so one document serves every
	// deployment (behind a proxy, the service must be mounted at the root).
	config.Servers = []*huma.Server{{URL: "/", Description: "This deployment: the host that serves this document."}}
	// huma documents 422 on every operation with a body, but validation
	// failures are 400 here (useProblemErrors): drop it from the document.
	config.OnAddOperation = append(config.OnAddOperation, func(_ *huma.OpenAPI, op *huma.Operation) {
		delete(op.Responses, strconv.Itoa(http.StatusUnprocessableEntity))
	})
	config.OpenAPIPath = ""
	config.DocsPath = ""
	config.SchemasPath = ""
	config.CreateHooks = nil // no $schema links in responses
	config.AllowAdditionalPropertiesByDefault = true
	return config
}

// jsonResponse documents a 200 JSON answer whose body has the schema of
// output's Body field, named as huma names an output's body, for a handler
// that writes the bytes itself.
func jsonResponse(api huma.API, output any) map[string]*huma.Response {
	t := reflect.TypeOf(output)
	f, ok := t.FieldByName("Body")
	if !ok {
		panic(t.Name() + " has no Body")
	}
	schema := huma.SchemaFromField(api.OpenAPI().Components.Schemas, f, t.Name()+f.Name)
	return map[string]*huma.Response{"200": {
		Description: http.StatusText(http.StatusOK),
		Content:     map[string]*huma.MediaType{"application/json": {Schema: schema}},
	}}
}

// jsonExample is a JSON request body with an example; huma fills in the
// schema from the input type.
func jsonExample(example any) *huma.RequestBody {
	return &huma.RequestBody{Content: map[string]*huma.MediaType{"application/json": {Example: example}}}
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// readyz is 200 while the database answers, 503 otherwise. A degradable
// dependency that fails (Redis) makes the status "degraded" but never
// takes the instance out of the load balancer: the service works without
// it.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	status, checks := "ok", map[string]string{"database": "ok"}
	for name, p := range s.Degradable {
		checks[name] = "ok"
		if err := p.Ping(r.Context()); err != nil {
			checks[name], status = "degraded", "degraded"
		}
	}
	code := http.StatusOK
	if err := s.Ready.Ping(r.Context()); err != nil {
		s.Logger.WarnContext(r.Context(), "not ready", "err", err)
		checks["database"], status, code = "failing", "unavailable", http.StatusServiceUnavailable
	}
	body, _ := json.Marshal(map[string]any{"status": status, "checks": checks})
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}

// MetricsHandler serves the Prometheus exposition of s.Metrics.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{})
}

// metricsToken requires "Authorization: Bearer token" when token is set:
// a missing or other one is 401, compared in constant time.
func metricsToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte("Bearer " + token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "GET /metrics needs Authorization: Bearer <ASSISTANT_METRICS_TOKEN>.", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
