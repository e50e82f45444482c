package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/textproc"
	"github.com/constraintlab/assistant/internal/verify"
)

// The MCP server: the Model Context Protocol over streamable HTTP at
// /mcp (github.com/modelcontextprotocol/go-sdk), for desktop and IDE
// assistants and agent frameworks. Its tools call the handlers of the
// HTTP API (search, resolve, preview, verify, the chat turn), so they
// answer exactly what the endpoints answer; entity cards are resources
// assistant://<type>/<slug>.
//
// Authentication is the API's: /mcp goes through authenticate like
// /api/v1/ (a bearer API key; one usage row per HTTP request, and one
// message per request: batches are refused, mcpguard.go). Every method
// but initialize and ping counts against the key's per-minute budget, the
// same limiter and window as POST /api/v1/chat and verify.
//
// The server is stateless (no Mcp-Session-Id; every POST is complete in
// itself), so any instance can answer any request, and each request's
// context (key, usage row, request id) reaches the tool that serves it.

const mcpPath = "/mcp"

// mcpCodeRateLimited is the JSON-RPC error code of a call refused by the
// per-key limit (an implementation-defined server error, -32000 to
// -32099; 29 for 429). Its data is {status, retry_after_seconds,
// request_id}.
const mcpCodeRateLimited = -32029

// mcpInstructions tell a connecting model what the server is for.
const mcpInstructions = "Business knowledge with citations that resolve. search_knowledge finds frameworks, papers and essays; " +
	"resolve_citations turns [type:slug] tokens into cards; preview_constraint shows which frameworks apply to a constraint in a vertical; " +
	"verify_text checks any text claim by claim; ask_assistant runs a whole assistant turn (mode: operator, customer, support or success) " +
	"whose answer cites the knowledge and carries a confidence verdict per claim. Entity cards are resources assistant://<type>/<slug>. " +
	"Keep citation tokens such as [framework:theory-of-constraints] in what you show the user."

// mcpSurface holds the MCP server's state: the schemas of its tools and
// the knowledge version its resource list was built from.
type mcpSurface struct {
	s     *Server
	ss    *schemaSet
	srv   *mcp.Server
	tools map[string]bool // the names of the tools, fixed at start

	mu        sync.Mutex
	listed    bool
	version   int64
	resources []string // URIs registered as resources
}

// mcpHandler builds the MCP server and its streamable HTTP handler.
func (s *Server) mcpHandler() http.Handler {
	m := &mcpSurface{s: s, ss: newSchemaSet(), tools: map[string]bool{}}
	// The SDK logs every stateless request's session at INFO (three lines,
	// without the request's context, so without its id); the request's
	// own line says what happened. Its warnings and errors are kept.
	sdkLogger := slog.New(levelFloor{s.Logger.Handler(), slog.LevelWarn})
	srv := mcp.NewServer(&mcp.Implementation{Name: "assistant", Title: "Assistant", Version: s.Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       sdkLogger,
		PageSize:     mcpResourcePageSize,
		// Stateless: there is no session to notify of list changes, and
		// no logging capability.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: false},
			Resources: &mcp.ResourceCapabilities{ListChanged: false},
		},
	})
	m.srv = srv
	m.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "assistant://{type}/{slug}",
		Name:        "entity-card",
		Title:       "Knowledge entity card",
		Description: "The card of a framework, paper or essay (type framework, paper or blog), as POST /api/assistant/v1/resolve returns it. Citation token [type:slug] is resource assistant://type/slug.",
		MIMEType:    "application/json",
	}, m.readCard)
	srv.AddReceivingMiddleware(m.middleware)
	return m.guard(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       sdkLogger,
		// The SDK refuses requests reaching a loopback listener under
		// another Host name (DNS rebinding). That guards servers without
		// authentication; this one needs an API key a rebinding page does
		// not have, and is commonly run behind a reverse proxy on the same
		// host, which the check would break.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBodyBytes,
	}))
}

// middleware names the call on the request's usage row, counts every
// method that does work against the key's limit (all but initialize and
// ping), and keeps the resource list in step with the knowledge base.
// The guard lets one message through per HTTP request, so each call has
// the request's usage row to itself.
func (m *mcpSurface) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		endpoint := "POST " + mcpPath + " " + method
		tool := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
			if !m.tools[p.Name] {
				m.count(method, "", nil, errUnknownTool)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", cutEcho(p.Name))}
			}
			tool = p.Name
			endpoint += " " + p.Name
		}
		usageFrom(ctx).setEndpoint(endpoint)
		if !mcpFreeMethods[method] {
			if err := m.admit(ctx); err != nil {
				m.count(method, tool, nil, err)
				return nil, err
			}
		}
		if method == "resources/list" {
			if err := m.syncResources(ctx); err != nil {
				m.count(method, tool, nil, err)
				return nil, err
			}
		}
		res, err := next(ctx, method, req)
		m.count(method, tool, res, err)
		return res, err
	}
}

// errUnknownTool stands for the refusal of a tool the server does not
// serve, in the metrics.
var errUnknownTool = errors.New("unknown tool")

// count records one MCP call: a tool that answered with isError is an
// error too.
func (m *mcpSurface) count(method, tool string, res mcp.Result, err error) {
	if m.s.metrics == nil {
		return
	}
	outcome := "ok"
	if r, ok := res.(*mcp.CallToolResult); err != nil || (ok && r != nil && r.IsError) {
		outcome = "error"
	}
	m.s.metrics.mcpCalls.WithLabelValues(method, tool, outcome).Inc()
}

// admit counts one call against the key's per-minute budget (D2b), in the
// limiter POST /api/v1/chat uses. A limiter that cannot decide admits.
func (m *mcpSurface) admit(ctx context.Context) error {
	lim := m.s.ChatLimiter
	key, ok := KeyFrom(ctx)
	limit := keyLimit(key, m.s.ChatRateLimit)
	if lim == nil || limit <= 0 || !ok {
		return nil
	}
	d, err := allowKey(ctx, lim, key, limit)
	m.s.metrics.limit("key", d, err)
	if err != nil {
		m.s.Logger.WarnContext(ctx, "rate limiter failed; admitting", "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	secs := max(1, ceilSeconds(d.RetryAfter))
	usageFrom(ctx).failedWith(http.StatusTooManyRequests)
	data, _ := json.Marshal(map[string]any{"status": http.StatusTooManyRequests, "retry_after_seconds": secs, "request_id": RequestIDFrom(ctx)})
	window := m.s.ChatRateWindow
	if window <= 0 {
		window = time.Minute
	}
	return &jsonrpc.Error{Code: mcpCodeRateLimited, Data: data, Message: "This key made " + strconv.Itoa(limit) +
		" requests in the last " + strconv.Itoa(max(1, ceilSeconds(window))) +
		" seconds (chat, verify, MCP calls and the OpenAI-compatible facade share the budget). Retry after " +
		strconv.Itoa(secs) + " seconds."}
}

// --- tools ---

// mcpTool is one tool: its argument and result types (their schemas come
// from the same declarations as the HTTP API's) and what it runs.
type mcpTool struct {
	tool *mcp.Tool
	in   reflect.Type
	out  reflect.Type
	// run decodes the validated arguments, runs the handler and returns
	// the structured result and the cards it mentions.
	run func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error)
}

func fieldType(v any, field string) reflect.Type {
	f, ok := reflect.TypeOf(v).FieldByName(field)
	if !ok {
		panic("no field " + field)
	}
	return f.Type
}

func (m *mcpSurface) addTools(srv *mcp.Server) {
	s := m.s
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	tools := []mcpTool{{
		tool: &mcp.Tool{Name: "search_knowledge", Title: "Search the knowledge base", Annotations: readOnly,
			Description: "Ranked entity cards (frameworks, papers, essays) for a plain-language query: the same retrieval the assistant uses (GET /api/assistant/v1/search). Each card's token is what answers cite as [type:slug]."},
		in: reflect.TypeFor[mcpSearchArgs](), out: fieldType(searchOutput{}, "Body"),
		run: func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error) {
			var a mcpSearchArgs
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, nil, err
			}
			if a.Limit == 0 {
				a.Limit = searchDefaultLimit()
			}
			out, err := s.search(ctx, &searchInput{Q: a.Query, Type: a.Type, Limit: a.Limit})
			if err != nil {
				return nil, nil, err
			}
			var links []*mcp.ResourceLink
			for _, r := range out.Body.Results {
				links = append(links, cardLink(r.Token, r.Title))
			}
			return out.Body, links, nil
		},
	}, {
		tool: &mcp.Tool{Name: "resolve_citations", Title: "Resolve citation tokens", Annotations: readOnly,
			Description: "Turns 1 to 100 citation tokens ({type, slug}, written [type:slug] in answers) into entity cards, in request order, each once (POST /api/assistant/v1/resolve). Tokens that do not resolve are listed in unresolved with the reason."},
		in: fieldType(resolveInput{}, "Body"), out: fieldType(resolveOutput{}, "Body"),
		run: func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error) {
			var in resolveInput
			if err := json.Unmarshal(args, &in.Body); err != nil {
				return nil, nil, err
			}
			out, err := s.resolve(ctx, &in)
			if err != nil {
				return nil, nil, err
			}
			var links []*mcp.ResourceLink
			for _, c := range out.Body.Resolved {
				links = append(links, cardLink(c.Token, c.Title))
			}
			return out.Body, links, nil
		},
	}, {
		tool: &mcp.Tool{Name: "preview_constraint", Title: "Preview the frameworks for a constraint", Annotations: readOnly,
			Description: "Which frameworks apply to a constraint in a business vertical, best first, each with why, first steps, metrics and supporting papers (POST /api/assistant/v1/preview). Send vertical and exactly one of archetype_id or free_text. " +
				"Verticals: " + strings.Join(assistant.VerticalIDs, ", ") + "."},
		in: fieldType(previewInput{}, "Body"), out: fieldType(previewOutput{}, "Body"),
		run: func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error) {
			var in previewInput
			if err := json.Unmarshal(args, &in.Body); err != nil {
				return nil, nil, err
			}
			out, err := s.preview(ctx, &in)
			if err != nil {
				return nil, nil, err
			}
			var links []*mcp.ResourceLink
			titles := map[string]string{}
			for _, fa := range out.Body.FrameworkApplications {
				titles[fa.Token] = fa.Title
			}
			for _, t := range out.Body.Citations {
				links = append(links, cardLink(t, titles[t]))
			}
			return out.Body, links, nil
		},
	}}
	if s.Verifier != nil {
		tools = append(tools, mcpTool{
			tool: &mcp.Tool{Name: "verify_text", Title: "Verify a text against the knowledge base", Annotations: readOnly,
				Description: "The confidence verdict for any text (POST /api/v1/verify): each claim is verified, unsupported or contradicted, with the passage that decided it. Claims are checked against the entities their own [type:slug] tokens cite; claims citing nothing against citations."},
			in: reflect.TypeFor[verifyRequest](), out: reflect.TypeFor[verify.Confidence](),
			run: func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error) {
				in := verifyInput{}
				if err := json.Unmarshal(args, &in.Body); err != nil {
					return nil, nil, err
				}
				if errs := in.Resolve(nil); len(errs) > 0 {
					return nil, nil, validationProblem(ctx, errs)
				}
				if in.Body.Source == "" {
					in.Body.Source = "mcp"
				}
				out, err := s.verifyText(ctx, &in)
				if err != nil {
					return nil, nil, err
				}
				var links []*mcp.ResourceLink
				seen := map[string]bool{}
				for _, v := range out.Body.Verdicts {
					for _, t := range v.Citations {
						if !seen[t] {
							seen[t] = true
							links = append(links, cardLink(t, ""))
						}
					}
				}
				return out.Body, links, nil
			},
		})
	}
	if s.Chat != nil {
		tools = append(tools, mcpTool{
			tool: &mcp.Tool{Name: "ask_assistant", Title: "Ask the assistant", Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
				Description: "One turn of the assistant (POST /api/v1/chat): the answer in a persona (mode operator, customer, support or success), " +
					"grounded in the knowledge base with [type:slug] citation tokens, the tool calls it made (reasoning_trace), the knowledge used (rag_hits) " +
					"and a confidence verdict per claim. Pass earlier turns as history and the business's industry as vertical."},
			in: reflect.TypeFor[chatRequest](), out: reflect.TypeFor[chat.Response](),
			run: func(ctx context.Context, args json.RawMessage) (any, []*mcp.ResourceLink, error) {
				in := chatInput{}
				if err := json.Unmarshal(args, &in.Body); err != nil {
					return nil, nil, err
				}
				if errs := in.Resolve(nil); len(errs) > 0 {
					return nil, nil, validationProblem(ctx, errs)
				}
				if in.Body.Source == "" {
					in.Body.Source = "mcp"
				}
				req, err := s.prepareTurn(ctx, in.Body)
				if err != nil {
					return nil, nil, err
				}
				resp, err := s.runTurn(ctx, req, nil)
				if err != nil {
					return nil, nil, s.chatProblem(ctx, err)
				}
				var links []*mcp.ResourceLink
				for _, h := range resp.RagHits {
					links = append(links, cardLink(h.Source, h.Title))
				}
				return resp, links, nil
			},
		})
	}
	for _, t := range tools {
		m.tools[t.tool.Name] = true
		m.add(srv, t)
	}
}

// mcpSearchArgs are search_knowledge's arguments: GET /search's query
// parameters (searchInput) under JSON names, with the same bounds
// (TestMCPSearchSchemaMatchesSearch holds them together).
type mcpSearchArgs struct {
	Query string `json:"query" minLength:"1" maxLength:"500" doc:"What to look for, in plain words, 1 to 500 characters."`
	Type  string `json:"type,omitempty" enum:"framework,paper,blog" doc:"Only entities of this type: framework, paper or blog."`
	Limit int    `json:"limit,omitempty" minimum:"1" maximum:"50" default:"10" doc:"Results to return, 1 to 50 (default 10)."`
}

// searchDefaultLimit is GET /search's default limit, read from its
// declaration.
func searchDefaultLimit() int {
	f, _ := reflect.TypeFor[searchInput]().FieldByName("Limit")
	n, err := strconv.Atoi(f.Tag.Get("default"))
	if err != nil {
		panic("searchInput.Limit has no integer default")
	}
	return n
}

// withIDEnums lists the allowed ids of the arguments `vertical` (the
// catalog's verticals) and `mode` (the personas) as enums, so that a
// model picks one rather than guessing free text. The HTTP schemas leave
// vertical open so that an unknown id gets the endpoint's own 400, which
// lists them; the tool's check is that same validation.
func withIDEnums(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	for name, ids := range map[string][]string{"vertical": assistant.VerticalIDs, "mode": chat.Modes} {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		enum := make([]any, len(ids))
		for i, id := range ids {
			enum[i] = id
		}
		p["enum"] = enum
	}
	return schema
}

// add registers t with the SDK: the schemas, then for each call the
// arguments checked against the input schema (huma's validator, as on the
// HTTP API), the handler, and the result as structured content, its JSON
// as text, and a link to each card it mentions. A failure is a tool error
// (isError) whose text is the problem document the HTTP API would answer.
func (m *mcpSurface) add(srv *mcp.Server, t mcpTool) {
	in := m.ss.schema(t.in, t.tool.Name+"Arguments")
	out := m.ss.schema(t.out, t.tool.Name+"Result")
	t.tool.InputSchema = withIDEnums(m.ss.inline(in))
	t.tool.OutputSchema = m.ss.inline(out)
	srv.AddTool(t.tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if errs := m.ss.check(in, args); len(errs) > 0 {
			return m.toolError(ctx, detailsProblem(ctx, errs)), nil
		}
		result, links, err := t.run(ctx, args)
		if err != nil {
			return m.toolError(ctx, err), nil
		}
		text, err := json.Marshal(result)
		if err != nil {
			return nil, fmt.Errorf("encoding the result: %w", err)
		}
		res := &mcp.CallToolResult{StructuredContent: result, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
		for _, l := range links {
			res.Content = append(res.Content, l)
		}
		return res, nil
	})
}

// toolError is a failed call: the problem document as text, and its
// status on the request's usage row.
func (m *mcpSurface) toolError(ctx context.Context, err error) *mcp.CallToolResult {
	p := problemFromError(ctx, m.s.Logger, err)
	usageFrom(ctx).failedWith(p.Status)
	b, _ := json.Marshal(p)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// validationProblem is the 400 problem of invalid arguments, as huma
// would answer it.
func validationProblem(ctx context.Context, errs []error) *Problem {
	var details []*huma.ErrorDetail
	for _, e := range errs {
		if d, ok := e.(*huma.ErrorDetail); ok {
			details = append(details, d)
		} else {
			details = append(details, &huma.ErrorDetail{Message: e.Error()})
		}
	}
	return detailsProblem(ctx, details)
}

func detailsProblem(ctx context.Context, details []*huma.ErrorDetail) *Problem {
	p := newProblem(ctx, http.StatusBadRequest, "")
	cutDetailEchoes(details)
	p.Errors = details
	p.Detail = validationDetail(details)
	return p
}

// --- resources ---

// cardURI is the resource URI of a citation token type:slug.
func cardURI(token string) string {
	typ, slug, _ := strings.Cut(token, ":")
	return "assistant://" + typ + "/" + slug
}

func cardLink(token, title string) *mcp.ResourceLink {
	return &mcp.ResourceLink{URI: cardURI(token), Name: token, Title: title, MIMEType: "application/json"}
}

// readCard answers resources/read of assistant://<type>/<slug> with the
// entity card, as /resolve gives it.
func (m *mcpSurface) readCard(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, "assistant://")
	typ, slug, _ := strings.Cut(rest, "/")
	t := assistant.Token{Type: assistant.EntityType(typ), Slug: slug}
	if !ok || !t.Valid() {
		return nil, mcp.ResourceNotFoundError(cutEcho(uri))
	}
	found, err := m.s.Knowledge.Entities(ctx, []assistant.Token{t})
	if err != nil {
		return nil, problemFromError(ctx, m.s.Logger, err)
	}
	e, ok := found[t]
	if !ok {
		return nil, mcp.ResourceNotFoundError(cutEcho(uri))
	}
	b, err := json.Marshal(m.s.card(e))
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// syncResources lists every entity as a resource, rebuilding the list
// only when the knowledge base changed (KnowledgeVersion moved), so that
// entities imported while the service runs are listed too.
func (m *mcpSurface) syncResources(ctx context.Context) error {
	v, err := m.s.Knowledge.KnowledgeVersion(ctx)
	if err != nil {
		return problemFromError(ctx, m.s.Logger, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.listed && v == m.version {
		return nil
	}
	all, err := m.s.Knowledge.AllEntities(ctx)
	if err != nil {
		return problemFromError(ctx, m.s.Logger, err)
	}
	srv := m.srv
	srv.RemoveResources(m.resources...)
	m.resources = m.resources[:0]
	for _, e := range all {
		tok := e.Token().String()
		r := &mcp.Resource{URI: cardURI(tok), Name: tok, Title: e.Title, Description: summaryLine(e.Summary), MIMEType: "application/json"}
		srv.AddResource(r, m.readCard)
		m.resources = append(m.resources, r.URI)
	}
	m.listed, m.version = true, v
	return nil
}

// summaryLine is the first sentence of a summary, for resource lists.
func summaryLine(summary string) string {
	if ss := textproc.Sentences(summary); len(ss) > 0 {
		return ss[0]
	}
	return summary
}

// levelFloor passes on the records of at least its level.
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelFloor) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(attrs), h.min}
}

func (h levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(name), h.min}
}
