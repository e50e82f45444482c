package api

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// What huma cannot derive from the handlers' types is added to the
// OpenAPI document here, once every operation is registered: the
// response headers the middleware sends, the 304 of the cached GETs, the
// fields sent as null, the events of the streams, and the document's
// tags, contact and license. TestContract (contract_test.go) holds the
// result to real answers.

// Operations counted in the key's window (limitedPaths): every answer
// carries RateLimit-Policy and RateLimit.
var keyLimitedOperations = []string{"chat", "verify", "openaiChatCompletions", "openaiResponses"}

// documentTags describes the operations' tags, in the order a reader meets
// them.
var documentTags = []*huma.Tag{
	{Name: "Chat", Description: "One turn of the assistant, as JSON or server-sent events (an API key)."},
	{Name: "Verify", Description: "Check any text against the knowledge base (an API key)."},
	{Name: "Keys", Description: "The API key making the request."},
	{Name: "Knowledge", Description: "Public, cached, unauthenticated: counts, citation cards, search, the catalog, the preview and the leaderboard."},
	{Name: "OpenAI-compatible", Description: "OpenAI's chat completions, responses and models over the assistant's personas; errors in OpenAI's shape."},
	{Name: "Meta", Description: "This document."},
}

func headerRef(name string) *huma.Param { return &huma.Param{Ref: "#/components/headers/" + name} }

// responseHeaders are the components' reusable headers.
func responseHeaders() map[string]*huma.Header {
	str := func() *huma.Schema { return &huma.Schema{Type: huma.TypeString} }
	return map[string]*huma.Header{
		"X-Request-Id": {Description: "The request's id (the caller's X-Request-Id when it is safe): quote it when reporting a problem; errors carry it as request_id.",
			Schema: str(), Required: true},
		"Cache-Control": {Description: "public, max-age=60, stale-while-revalidate=60 on the public GETs; no-store on POSTs, errors and requests with X-Try-It-Now: 1.",
			Schema: str(), Required: true},
		"ETag": {Description: "A strong validator of the body: send it back in If-None-Match to get 304 while it is unchanged.", Schema: str()},
		"RateLimit-Policy": {Description: "The limit that applies (draft-ietf-httpapi-ratelimit-headers), e.g. \"chat\";q=60;w=60: q requests per w seconds.",
			Schema: str(), Example: `"chat";q=60;w=60`},
		"RateLimit": {Description: "What is left of it: r requests remain, t seconds until one is free again, e.g. \"chat\";r=12;t=48.",
			Schema: str(), Example: `"chat";r=12;t=48`},
		"Retry-After": {Description: "Seconds to wait before retrying (the body's retry_after_seconds on a 429).",
			Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: ptr(1.0)}, Required: true},
		"WWW-Authenticate": {Description: "Bearer, with the reason the key was refused.", Schema: str(), Required: true,
			Example: `Bearer realm="assistant", error="invalid_token"`},
	}
}

func ptr[T any](v T) *T { return &v }

// streamEvents names, per operation, the schema of each server-sent
// event's data (the media type's x-events; an event without a name is
// "message"). The contract test validates every event against it.
var streamEvents = map[string]map[string]string{
	"chat":                  {"hop": "TraceItem", "delta": "ChatStreamDelta", "final": "Response", "error": "Problem"},
	"openaiChatCompletions": {"message": "OpenAIChunk"},
	"openaiResponses": {"response.created": "OpenAIResponseEvent", "response.in_progress": "OpenAIResponseEvent", "response.output_item.added": "OpenAIResponseEvent",
		"response.content_part.added": "OpenAIResponseEvent", "response.output_text.delta": "OpenAIResponseEvent", "response.output_text.done": "OpenAIResponseEvent",
		"response.content_part.done": "OpenAIResponseEvent", "response.output_item.done": "OpenAIResponseEvent", "response.completed": "OpenAIResponseEvent", "error": "OpenAIResponseEvent"},
}

// nullableObjects are the properties, by schema, whose object is sent as
// null: a verdict's evidence when no passage decided it; a response's
// usage and extension while it is in progress, and its error unless it
// failed.
var nullableObjects = map[string][]string{
	"Verdict":        {"evidence"},
	"OpenAIResponse": {"error", "usage", "x_assistant"},
}

// refineOpenAPI completes the document (see above).
func refineOpenAPI(doc *huma.OpenAPI) {
	reg := doc.Components.Schemas
	reg.Schema(reflect.TypeFor[chatStreamDelta](), true, "")
	reg.Schema(reflect.TypeFor[openAIChunk](), true, "")
	doc.Info.Contact = &huma.Contact{Name: "The assistant service's maintainers", URL: "https://github.com/constraintlab/assistant"}
	doc.Info.License = &huma.License{Name: "Apache-2.0", Identifier: "Apache-2.0"}
	doc.Tags = documentTags
	if doc.Components.Headers == nil {
		doc.Components.Headers = map[string]*huma.Header{}
	}
	for name, h := range responseHeaders() {
		doc.Components.Headers[name] = h
	}

	// Objects sent as null (huma cannot mark a referenced object
	// nullable): anyOf the object and null.
	for name, props := range nullableObjects {
		schema := reg.Map()[name]
		if schema == nil {
			continue // a server without chat (or verify) has no such operation
		}
		for _, prop := range props {
			e := schema.Properties[prop]
			if e == nil || e.Ref == "" {
				panic("refineOpenAPI: " + name + "." + prop + " is not a referenced object")
			}
			schema.Properties[prop] = &huma.Schema{Description: e.Description, AnyOf: []*huma.Schema{{Ref: e.Ref}, {Type: "null"}}}
		}
	}

	// The document itself is a public endpoint like the others.
	if op := doc.Paths[openAPIPath].Get; op != nil {
		op.Description = "The OpenAPI 3.1 description of every /api/ endpoint, generated from the code that serves them. Cached like the other public GETs."
		op.Responses[strconv.Itoa(http.StatusTooManyRequests)] = &huma.Response{Description: http.StatusText(http.StatusTooManyRequests),
			Content: map[string]*huma.MediaType{"application/problem+json": {Schema: &huma.Schema{Ref: "#/components/schemas/Problem"}}}}
	}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post} {
			if op == nil {
				continue
			}
			refineOperation(method, path, op)
		}
	}
}

func refineOperation(method, path string, op *huma.Operation) {
	if events := streamEvents[op.OperationID]; events != nil {
		if mt := op.Responses["200"].Content["text/event-stream"]; mt != nil {
			x := map[string]any{}
			for name, schema := range events {
				x[name] = map[string]string{"$ref": "#/components/schemas/" + schema}
			}
			if mt.Extensions == nil {
				mt.Extensions = map[string]any{}
			}
			mt.Extensions["x-events"] = x
		}
	}
	public := op.Security != nil && len(op.Security) == 0
	cachedGET := method == http.MethodGet && strings.HasPrefix(path, publicPrefix+"/") || path == openAPIPath
	limited := slices.Contains(keyLimitedOperations, op.OperationID)
	if cachedGET {
		op.Parameters = append(op.Parameters, &huma.Param{Name: "If-None-Match", In: "header",
			Description: "An ETag of an earlier answer: 304 with no body while it still matches.", Schema: &huma.Schema{Type: huma.TypeString}})
		op.Responses[strconv.Itoa(http.StatusNotModified)] = &huma.Response{Description: "The answer with the ETag sent in If-None-Match is still current."}
	}
	for code, resp := range op.Responses {
		status, _ := strconv.Atoi(code)
		if resp.Headers == nil {
			resp.Headers = map[string]*huma.Param{}
		}
		h := resp.Headers
		h["X-Request-Id"] = headerRef("X-Request-Id")
		h["Cache-Control"] = headerRef("Cache-Control")
		if cachedGET && (status == http.StatusOK || status == http.StatusNotModified) {
			h["ETag"] = headerRef("ETag")
		}
		// The public endpoints send RateLimit headers only past the soft
		// limit; the key's endpoints on every answer but a 401.
		if public || (limited && status != http.StatusUnauthorized) || status == http.StatusTooManyRequests {
			h["RateLimit-Policy"] = headerRef("RateLimit-Policy")
			h["RateLimit"] = headerRef("RateLimit")
		}
		switch status {
		case http.StatusTooManyRequests, http.StatusBadGateway:
			h["Retry-After"] = headerRef("Retry-After")
		case http.StatusUnauthorized:
			h["WWW-Authenticate"] = headerRef("WWW-Authenticate")
		}
	}
}
