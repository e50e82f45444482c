package api

import (
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

// routeMux is a ServeMux that remembers the patterns registered on it, so
// tests can hold the OpenAPI document against what is really served.
// A pattern in wrap has its handler wrapped by the function given; the
// API's POST operations read their bodies as JSON whatever the
// Content-Type (jsonBodies).
type routeMux struct {
	*http.ServeMux
	patterns []string
	wrap     map[string]func(http.Handler) http.Handler
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	if wrap := m.wrap[pattern]; wrap != nil {
		h = wrap(h)
	}
	if strings.HasPrefix(pattern, http.MethodPost+" /api/") {
		h = jsonBodies(h)
	}
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Handler returns the whole HTTP surface of the service.
func (s *Server) Handler() http.Handler {
	h, _ := s.handler()
	return h
}

// handler builds the surface and also returns the patterns it serves.
func (s *Server) handler() (http.Handler, []string) {
	mux := &routeMux{ServeMux: http.NewServeMux(), wrap: map[string]func(http.Handler) http.Handler{
		// Answers to bodies seen before come from memory (resolvememo.go).
		http.MethodPost + " " + publicPrefix + "/resolve": s.rememberResolves,
	}}
	api := s.newAPI(mux)

	// Public knowledge endpoints (no authentication).
	// Their security is an explicit empty requirement: "no authentication",
	// stated rather than left out, so linters and generators need not guess.
	public := func(op huma.Operation) huma.Operation {
		op.Tags = []string{"Knowledge"}
		op.Security = []map[string][]string{}
		op.MaxBodyBytes = humaBodyLimit
		op.Errors = append(op.Errors, http.StatusTooManyRequests)
		return op
	}
	huma.Register(api, public(huma.Operation{
		OperationID: "getKnowledgeStats", Method: http.MethodGet, Path: publicPrefix + "/knowledge-stats",
		Summary:     "Count the citable knowledge",
		Description: "Counts the entities the assistant can cite, by type. Cached for 60 seconds.",
	}), s.knowledgeStats)
	// resolve writes its answer from remembered card JSON (resolveJSON);
	// its documented schema is resolveOutput's, as if huma encoded it.
	huma.Register(api, public(huma.Operation{
		OperationID: "resolveTokens", Method: http.MethodPost, Path: publicPrefix + "/resolve",
		Summary:     "Resolve citation tokens into cards",
		Description: "Turns 1 to 100 citation tokens into entity cards for hover cards, in request order, each once. Tokens that do not resolve are listed in `unresolved` with the reason; they are not an error.",
		Errors:      []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
		Responses:   jsonResponse(api, resolveOutput{}),
	}), s.resolveJSON)
	huma.Register(api, public(huma.Operation{
		OperationID: "getLeaderboard", Method: http.MethodGet, Path: publicPrefix + "/leaderboard",
		Summary:     "Most cited knowledge",
		Description: "The entities cited by the most chat responses over the last `days` days, across all workspaces. Ties break by token.",
		Errors:      []int{http.StatusBadRequest},
	}), s.leaderboard)
	huma.Register(api, public(huma.Operation{
		OperationID: "searchKnowledge", Method: http.MethodGet, Path: publicPrefix + "/search",
		Summary:     "Search the knowledge base",
		Description: "Ranked entity cards for a plain-language query: the same retrieval the assistant uses.",
		Errors:      []int{http.StatusBadRequest},
	}), s.search)
	huma.Register(api, public(huma.Operation{
		OperationID: "getCatalog", Method: http.MethodGet, Path: publicPrefix + "/catalog",
		Summary:     "Verticals and constraint archetypes",
		Description: "The allowed ids of `vertical` and `archetype_id`, with names and descriptions.",
	}), s.catalog)
	s.registerPreview(api, public)

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
	huma.Register(api, authenticated(huma.Operation{
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
		huma.Register(api, chatOp, s.chatTurn)
	}
	if s.Verifier != nil {
		huma.Register(api, authenticated(huma.Operation{
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
		s.registerOpenAI(api, authenticated)
	}

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
	mux.HandleFunc("GET "+openAPIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(spec)
	})
	mux.Handle("GET "+docsPath, docsHandler())
	mux.Handle("GET "+docsPath+"/", docsHandler())
	mux.Handle("GET "+componentsPrefix+"assistant-citations.js", componentHandler(citationsComponent))

	// The MCP server (mcp.go): its tools describe themselves over the
	// protocol, so it stays out of the OpenAPI document.
	mux.Handle("POST "+mcpPath, s.mcpHandler())

	// The admin area: pages for people, with their own sessions and
	// HTML errors (internal/admin).
	if s.Admin != nil {
		mux.Handle("/admin/", s.Admin)
		mux.Handle("GET /admin", http.RedirectHandler("/admin/integrations", http.StatusSeeOther))
	}

	// Operational endpoints, outside the OpenAPI document (D15).
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{}))

	return chain(capturePattern(mux),
		requestID,
		observe(s.Logger, newMetrics(s.Metrics), s.Now),
		openAIErrors,
		apiProblems,
		recoverer(s.Logger),
		cors(s.CORSOrigins),
		s.authenticate,
		keyRateLimit(s.ChatLimiter, s.ChatRateLimit, s.ChatRateWindow, s.Logger),
		publicRateLimit(s.PublicLimiter, s.TrustedProxies, s.Logger),
		caching,
	), mux.patterns
}

// newAPI configures huma: OpenAPI 3.1 served by us (not by huma), no
// CDN-backed docs page, our problem documents, unknown JSON fields ignored
// (D4).
func (s *Server) newAPI(mux humago.Mux) huma.API {
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
	return humago.New(mux, config)
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
