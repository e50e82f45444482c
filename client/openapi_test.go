package client

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPISchemasMatchTypes compares every schema of the served OpenAPI
// document with the client type that mirrors it, field by field in both
// directions, and the query parameters of search and leaderboard with the
// client's params: a field added, renamed or removed on either side fails.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	c := strictClient(t, false)
	raw, err := c.OpenAPI(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
		}
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	mirror := map[string]any{
		"CatalogItem": CatalogItem{}, "CatalogOutputBody": Catalog{}, "ChatRequest": ChatRequest{}, "ChatStreamDelta": DeltaEvent{},
		"CardApplication": CardApplication{}, "Confidence": Confidence{}, "EntityCard": EntityCard{}, "ErrorDetail": ErrorDetail{}, "Evidence": Evidence{},
		"FrameworkApplication": FrameworkApplication{}, "HistoryItem": HistoryItem{}, "KeyOutputBody": KeyInfo{},
		"LeaderboardEntry": LeaderboardEntry{}, "LeaderboardOutputBody": Leaderboard{},
		"PreviewAlternative": PreviewAlternative{}, "PreviewInputBody": PreviewRequest{}, "PreviewItem": PreviewItem{},
		"PreviewMatch": PreviewMatch{}, "PreviewOutputBody": Preview{}, "Problem": Error{}, "RagHit": RagHit{},
		"ResolveInputBody": struct {
			Tokens []Token `json:"tokens"`
		}{}, "ResolveOutputBody": ResolveResponse{}, "Response": ChatResponse{}, "SearchOutputBody": SearchResponse{},
		"SearchResult": SearchResult{}, "StatsOutputBody": KnowledgeStats{}, "TokenRef": Token{}, "TraceItem": TraceItem{},
		"UnresolvedToken": UnresolvedToken{}, "Verdict": Verdict{}, "VerifyRequest": VerifyRequest{},
		"TurnState": Turn{}, "KeyEvent": WebhookEvent{}, "TurnCompletedEvent": WebhookEvent{}, "KeyEventData": KeyEventData{},
		"TurnCompletedData": TurnCompletedData{}, "WebhookKey": WebhookKey{},
	}
	for name, schema := range doc.Components.Schemas {
		if strings.HasPrefix(name, "OpenAI") {
			// The OpenAI-compatible facade (/api/v1/openai/) is for OpenAI's
			// own clients (docs/integrations.md); this client does not mirror it.
			continue
		}
		v, ok := mirror[name]
		if !ok {
			t.Errorf("schema %s has no client type", name)
			continue
		}
		var want []string
		for p := range schema.Properties {
			if p != "$schema" {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if got := jsonFields(reflect.TypeOf(v)); !slices.Equal(got, want) {
			t.Errorf("schema %s: client fields %v, service fields %v", name, got, want)
		}
	}
	for name := range mirror {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("client type for %s, which the service no longer has", name)
		}
	}
	params := func(path string) []string {
		var out []string
		for _, p := range doc.Paths[path]["get"].Parameters {
			if p.In == "query" {
				out = append(out, p.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := params("/api/assistant/v1/search"); !slices.Equal(got, []string{"limit", "q", "type"}) {
		t.Errorf("search parameters %v", got)
	}
	if got := params("/api/assistant/v1/leaderboard"); !slices.Equal(got, []string{"days", "limit"}) {
		t.Errorf("leaderboard parameters %v", got)
	}
}

// jsonFields lists the JSON names of a struct's fields, embedded structs
// flattened, "-" fields left out.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
