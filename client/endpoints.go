package client

import (
	"context"
	"io"
	"net/url"
	"strconv"
)

// Chat sends one turn to POST /api/v1/chat and returns the whole answer.
// A 429 is retried after its Retry-After and a 502 after a backoff, as the
// retry policy says. Needs an API key.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	var out ChatResponse
	if err := c.call(ctx, request{method: "POST", path: "/api/v1/chat", body: req, retried: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Verify checks a text against the knowledge it cites (POST
// /api/v1/verify) and returns the confidence object, one verdict per
// claim. Retried as Chat is. Needs an API key.
func (c *Client) Verify(ctx context.Context, req VerifyRequest) (*Confidence, error) {
	var out Confidence
	if err := c.call(ctx, request{method: "POST", path: "/api/v1/verify", body: req, retried: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Key describes the API key the client sends (GET /api/v1/key): a way to
// check a key without spending a chat.
func (c *Client) Key(ctx context.Context) (*KeyInfo, error) {
	var out KeyInfo
	if err := c.call(ctx, request{method: "GET", path: "/api/v1/key"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// KnowledgeStats counts the entities the assistant can cite (GET
// /api/assistant/v1/knowledge-stats).
func (c *Client) KnowledgeStats(ctx context.Context) (*KnowledgeStats, error) {
	var out KnowledgeStats
	if err := c.call(ctx, request{method: "GET", path: "/api/assistant/v1/knowledge-stats"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Resolve resolves 1 to 100 citation tokens into hover cards (POST
// /api/assistant/v1/resolve). ResolveAll takes any number.
func (c *Client) Resolve(ctx context.Context, tokens []Token) (*ResolveResponse, error) {
	body := struct {
		Tokens []Token `json:"tokens"`
	}{tokens}
	if body.Tokens == nil {
		body.Tokens = []Token{}
	}
	var out ResolveResponse
	if err := c.call(ctx, request{method: "POST", path: "/api/assistant/v1/resolve", body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Search searches the knowledge base in plain words (GET
// /api/assistant/v1/search); results come best first.
func (c *Client) Search(ctx context.Context, p SearchParams) (*SearchResponse, error) {
	q := url.Values{"q": {p.Q}}
	if p.Type != "" {
		q.Set("type", p.Type)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var out SearchResponse
	if err := c.call(ctx, request{method: "GET", path: "/api/assistant/v1/search", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Leaderboard ranks the most cited entities (GET
// /api/assistant/v1/leaderboard).
func (c *Client) Leaderboard(ctx context.Context, p LeaderboardParams) (*Leaderboard, error) {
	q := url.Values{}
	if p.Days != 0 {
		q.Set("days", strconv.Itoa(p.Days))
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var out Leaderboard
	if err := c.call(ctx, request{method: "GET", path: "/api/assistant/v1/leaderboard", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Preview returns the frameworks that apply to a constraint archetype in
// a vertical (POST /api/assistant/v1/preview).
func (c *Client) Preview(ctx context.Context, req PreviewRequest) (*Preview, error) {
	var out Preview
	if err := c.call(ctx, request{method: "POST", path: "/api/assistant/v1/preview", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Catalog lists the verticals and constraint archetypes (GET
// /api/assistant/v1/catalog).
func (c *Client) Catalog(ctx context.Context) (*Catalog, error) {
	var out Catalog
	if err := c.call(ctx, request{method: "GET", path: "/api/assistant/v1/catalog"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenAPI returns the service's OpenAPI 3.1 document (GET
// /api/assistant/openapi.json) as raw JSON.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	resp, err := c.send(ctx, request{method: "GET", path: "/api/assistant/openapi.json"})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
