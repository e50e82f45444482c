package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// HandlerAndRoutes exposes the served patterns to the black-box tests.
func (s *Server) HandlerAndRoutes() (http.Handler, []string) { return s.handler() }

// CitationsComponent is the embedded <assistant-citations> module.
var CitationsComponent = citationsComponent

// StrongETag is the ETag the service gives a body.
var StrongETag = strongETag

// ResolveEncoded is resolve's typed answer to a request body, encoded as
// huma encodes an output body: what POST /resolve must write byte for byte.
func (s *Server) ResolveEncoded(ctx context.Context, body string) ([]byte, error) {
	var in resolveInput
	if err := json.Unmarshal([]byte(body), &in.Body); err != nil {
		return nil, err
	}
	out, err := s.resolve(ctx, &in)
	if err != nil {
		return nil, err
	}
	return encodeAsHuma(out.Body)
}

// SetMCPResponseLimit lowers the bound of /mcp answers.
func (s *Server) SetMCPResponseLimit(n int) { s.mcpResponseLimit = n }

// SetAuthPenalty changes how long a failed verification past the limit on
// failed authentication holds its address's turn.
func (s *Server) SetAuthPenalty(d time.Duration) { s.authPenalty = d }

// SearchEncoded is search's typed answer to a query, encoded as huma
// encodes an output body: what GET /search must write byte for byte.
func (s *Server) SearchEncoded(ctx context.Context, q string, limit int) ([]byte, error) {
	out, err := s.search(ctx, &searchInput{Q: q, Limit: limit})
	if err != nil {
		return nil, err
	}
	return encodeAsHuma(out.Body)
}

// ParseResolveBody reports whether a resolve body has the plain shape read
// without huma, and its tokens.
func ParseResolveBody(body []byte) ([]struct{ Type, Slug string }, bool) {
	refs, ok := parseResolveBody(body)
	out := make([]struct{ Type, Slug string }, len(refs))
	for i, r := range refs {
		out[i].Type, out[i].Slug = r.Type, r.Slug
	}
	return out, ok
}

// PreviewEncoded is preview's typed answer to a request body, encoded as
// huma encodes an output body: what POST /preview must write byte for byte.
func (s *Server) PreviewEncoded(ctx context.Context, body string) ([]byte, error) {
	var in previewInput
	if err := json.Unmarshal([]byte(body), &in.Body); err != nil {
		return nil, err
	}
	out, err := s.preview(ctx, &in)
	if err != nil {
		return nil, err
	}
	return encodeAsHuma(out.Body)
}

// encodeAsHuma encodes v as huma encodes an output body.
func encodeAsHuma(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}
