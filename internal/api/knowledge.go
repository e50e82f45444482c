package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/memo"
)

// EntityCard is a knowledge entity as hover cards and search show it (D10).
type EntityCard struct {
	Type       string   `json:"type" enum:"framework,paper,blog" doc:"Entity type: framework, paper or blog (an essay)."`
	Slug       string   `json:"slug" doc:"The slug part of the citation token."`
	Token      string   `json:"token" example:"framework:theory-of-constraints" doc:"The citation token, type:slug; written [type:slug] in answers."`
	Title      string   `json:"title" doc:"Title of the work or common name of the framework."`
	Summary    string   `json:"summary" doc:"A summary of 60 to 150 words, written for this knowledge base."`
	URL        *string  `json:"url" nullable:"true" doc:"Canonical address, or null when there is none."`
	Year       *int     `json:"year" nullable:"true" doc:"Year of first publication or introduction, or null when unknown."`
	Authors    []string `json:"authors" doc:"Personal or organisational names."`
	Tags       []string `json:"tags" doc:"Topic words."`
	Archetypes []string `json:"archetypes" doc:"Constraint archetype ids (GET /api/assistant/v1/catalog) this entity helps with."`
	KeyIdeas   []string `json:"key_ideas" doc:"The main ideas, one per item."`
	WhenToUse  []string `json:"when_to_use" doc:"Situations the entity fits, in the words of someone in them, one per item."`
	Pitfalls   []string `json:"pitfalls" doc:"Common mistakes when applying it, one per item."`
	Related    []string `json:"related" doc:"Tokens of related entities."`
	// Applications are what the catalog says of the framework for each
	// constraint it serves: the text a chat answer cites when it applies
	// the framework, so a reader can check it on hover.
	Applications []CardApplication `json:"applications" doc:"How the catalog applies this framework to each constraint archetype it serves, in neutral words (a chat answer may cite them in its vertical's words); empty for entities the catalog does not apply."`
}

// CardApplication is the catalog's application of a framework to one
// constraint archetype.
type CardApplication struct {
	Archetype  string   `json:"archetype" doc:"The constraint archetype id."`
	Text       string   `json:"text" doc:"Why the framework fits that constraint."`
	FirstSteps []string `json:"first_steps" doc:"The first steps it prescribes there."`
}

// card is the hover card of e, with the catalog's applications of it when
// the server has the diagnosis.
func (s *Server) card(e assistant.Entity) EntityCard {
	c := cardOf(e)
	if s.Diagnosis != nil {
		for _, a := range s.Diagnosis.ApplicationsOf(e.Token()) {
			c.Applications = append(c.Applications, CardApplication{Archetype: a.Archetype, Text: a.Application, FirstSteps: nonNil(a.FirstSteps)})
		}
	}
	return c
}

func cardOf(e assistant.Entity) EntityCard {
	c := EntityCard{
		Type: string(e.Type), Slug: e.Slug, Token: e.Token().String(), Title: e.Title,
		Summary: e.Summary, Year: e.Year, Authors: nonNil(e.Authors), Tags: nonNil(e.Tags),
		Archetypes: nonNil(e.Archetypes), KeyIdeas: nonNil(e.KeyIdeas),
		WhenToUse: nonNil(e.WhenToUse), Pitfalls: nonNil(e.Pitfalls), Related: []string{}, Applications: []CardApplication{},
	}
	if e.URL != "" {
		u := e.URL
		c.URL = &u
	}
	for _, r := range e.Related {
		c.Related = append(c.Related, r.String())
	}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// --- knowledge-stats ---

type statsOutput struct {
	Body struct {
		Total      int `json:"total" doc:"Total number of entities the assistant can cite."`
		Frameworks int `json:"frameworks" doc:"Number of frameworks."`
		Papers     int `json:"papers" doc:"Number of papers."`
		Blogs      int `json:"blogs" doc:"Number of essays."`
	}
}

func (s *Server) knowledgeStats(ctx context.Context, _ *struct{}) (*statsOutput, error) {
	st, err := s.Knowledge.KnowledgeStats(ctx)
	if err != nil {
		return nil, err
	}
	out := &statsOutput{}
	out.Body.Total, out.Body.Frameworks, out.Body.Papers, out.Body.Blogs = st.Total, st.Frameworks, st.Papers, st.Blogs
	return out, nil
}

// --- resolve ---

// MaxResolveTokens is the most tokens one resolve call takes (D10).
const MaxResolveTokens = 100

type tokenRef struct {
	Type string `json:"type" doc:"framework, paper or blog; another value is listed in unresolved as invalid."`
	Slug string `json:"slug" doc:"Matches [a-z0-9_-]+; another value is listed in unresolved as invalid."`
}

type resolveInput struct {
	Body struct {
		Tokens []tokenRef `json:"tokens" minItems:"1" maxItems:"100" doc:"Citation tokens to resolve, 1 to 100."`
	}
}

type unresolvedToken struct {
	Type   string `json:"type"`
	Slug   string `json:"slug"`
	Reason string `json:"reason" enum:"not_found,invalid" doc:"invalid: not a well-formed token; not_found: no such entity."`
}

type resolveOutput struct {
	Body struct {
		Resolved   []EntityCard      `json:"resolved" doc:"Cards of the tokens that resolve, in request order, each once."`
		Unresolved []unresolvedToken `json:"unresolved" doc:"Tokens that do not resolve, in request order, each once."`
	}
}

func (s *Server) resolve(ctx context.Context, in *resolveInput) (*resolveOutput, error) {
	found, resolved, unresolved, err := s.resolveTokens(ctx, in.Body.Tokens)
	if err != nil {
		return nil, err
	}
	out := &resolveOutput{}
	out.Body.Resolved = make([]EntityCard, len(resolved))
	for i, t := range resolved {
		out.Body.Resolved[i] = s.card(found[t])
	}
	out.Body.Unresolved = unresolved
	return out, nil
}

// eachDistinctRef calls visit with each distinct ref, in order of first
// use: duplicates resolve once (D10). A short batch is checked against the
// refs before it, a longer one with a set.
func eachDistinctRef(refs []tokenRef, visit func(tokenRef)) {
	var seen map[tokenRef]bool
	if len(refs) > 32 {
		seen = make(map[tokenRef]bool, len(refs))
	}
	for i, ref := range refs {
		if seen != nil {
			if seen[ref] {
				continue
			}
			seen[ref] = true
		} else if slices.Contains(refs[:i], ref) {
			continue
		}
		visit(ref)
	}
}

// resolveTokens looks the tokens up: the entities found, by token, the
// tokens that resolve and those that do not, each in request order and
// once (D10).
func (s *Server) resolveTokens(ctx context.Context, refs []tokenRef) (map[assistant.Token]assistant.Entity, []assistant.Token, []unresolvedToken, error) {
	type item struct {
		ref   tokenRef
		token assistant.Token
		valid bool
	}
	items := make([]item, 0, len(refs))
	lookup := make([]assistant.Token, 0, len(refs))
	eachDistinctRef(refs, func(ref tokenRef) {
		t := assistant.Token{Type: assistant.EntityType(ref.Type), Slug: ref.Slug}
		it := item{ref: ref, token: t, valid: t.Valid()}
		if it.valid {
			lookup = append(lookup, t)
		}
		items = append(items, it)
	})
	found, err := s.Knowledge.Entities(ctx, lookup)
	if err != nil {
		return nil, nil, nil, err
	}
	resolved := lookup[:0] // the tokens that resolve, written over those looked up (the store keeps none)
	unresolved := []unresolvedToken{}
	for _, it := range items {
		switch _, ok := found[it.token]; {
		case !it.valid:
			unresolved = append(unresolved, unresolvedToken{Type: it.ref.Type, Slug: it.ref.Slug, Reason: "invalid"})
		case !ok:
			unresolved = append(unresolved, unresolvedToken{Type: it.ref.Type, Slug: it.ref.Slug, Reason: "not_found"})
		default:
			resolved = append(resolved, it.token)
		}
	}
	return found, resolved, unresolved, nil
}

// resolveRawOutput is POST /resolve's answer as written on the wire: the
// document of resolveOutput, assembled from each card's remembered JSON
// (cardJSON) instead of encoding every card again. Its schema in the
// OpenAPI document is resolveOutput's (routes.go).
type resolveRawOutput struct {
	Body func(huma.Context)
}

// resolveJSON answers POST /resolve with the bytes huma would write for
// resolve's output: the same fields, order and escaping, and a final
// newline. The whole body goes out in one write with its length, rather
// than in chunks.
func (s *Server) resolveJSON(ctx context.Context, in *resolveInput) (*resolveRawOutput, error) {
	answer, err := s.resolveAnswerOf(ctx, in.Body.Tokens)
	if err != nil {
		return nil, err
	}
	if r, ok := ctx.Value(rememberKey).(rememberedResolve); ok {
		s.resolves.put(r.version, r.body, answer)
	}
	return &resolveRawOutput{Body: func(hc huma.Context) { writeAssembled(hc, answer.appendTo) }}, nil
}

// marshalJSON encodes v as huma's JSON format does (no HTML escaping),
// without the newline that ends a document.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// cardCache remembers the JSON of each entity's card, by token, up to
// maxRememberedCards tokens. A remembered card serves only an entity whose
// card fields are unchanged (sameCard); an edited entity gets a new one.
type cardCache struct {
	once  sync.Once
	cards *memo.Versions[assistant.Token, assistant.Entity, []byte]
}

const maxRememberedCards = 20_000

// json returns the card of e (made by card) as huma would encode it.
func (c *cardCache) json(e assistant.Entity, card func(assistant.Entity) EntityCard) []byte {
	c.once.Do(func() {
		c.cards = &memo.Versions[assistant.Token, assistant.Entity, []byte]{MaxKeys: maxRememberedCards}
	})
	return c.cards.Get(e.Token(), e, sameCard, func(e assistant.Entity) []byte {
		b, err := marshalJSON(card(e))
		if err != nil { // a card is strings, numbers and lists of strings
			panic(fmt.Sprintf("encoding the card of %s: %v", e.Token(), err))
		}
		return b
	})
}

// sameCard reports whether two entities show the same card.
func sameCard(a, b assistant.Entity) bool {
	return a.Type == b.Type && a.Slug == b.Slug && a.Title == b.Title && a.Summary == b.Summary && a.URL == b.URL &&
		(a.Year == nil) == (b.Year == nil) && (a.Year == nil || *a.Year == *b.Year) &&
		slices.Equal(a.Authors, b.Authors) && slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Archetypes, b.Archetypes) &&
		slices.Equal(a.KeyIdeas, b.KeyIdeas) && slices.Equal(a.WhenToUse, b.WhenToUse) && slices.Equal(a.Pitfalls, b.Pitfalls) &&
		slices.Equal(a.Related, b.Related)
}

// --- leaderboard ---

type leaderboardInput struct {
	Days  int `query:"days" default:"30" minimum:"1" maximum:"365" doc:"Days to look back, 1 to 365."`
	Limit int `query:"limit" default:"10" minimum:"1" maximum:"100" doc:"Entities to return, 1 to 100."`
}

type leaderboardEntry struct {
	Rank      int    `json:"rank" doc:"1 for the most cited."`
	Type      string `json:"type"`
	Slug      string `json:"slug"`
	Token     string `json:"token"`
	Title     string `json:"title"`
	Citations int    `json:"citations" doc:"Chat responses in the window that cited the entity (once per response)."`
}

type leaderboardOutput struct {
	Body struct {
		Days    int                `json:"days"`
		Limit   int                `json:"limit"`
		Since   time.Time          `json:"since" doc:"Start of the window (inclusive), RFC 3339 UTC."`
		Until   time.Time          `json:"until" doc:"End of the window (exclusive), RFC 3339 UTC, truncated to the minute."`
		Entries []leaderboardEntry `json:"entries"`
	}
}

// leaderboardCache keeps the rankings of the current minute. The window
// ends at the start of the current minute and citations are recorded at
// the time of their turn, so a ranking cannot change until the minute
// does: the database is asked once per minute per (days, limit), not once
// per request (it aggregates a month of citation events). A turn that
// began before the minute turned and is recorded just after it shows from
// the next minute on: the same staleness as the minute edges may cache
// the answer for (max-age=60).
type leaderboardCache struct {
	mu    sync.Mutex
	until time.Time
	rows  map[[2]int][]assistant.LeaderboardEntry
}

func (c *leaderboardCache) get(until time.Time, days, limit int) ([]assistant.LeaderboardEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rows, ok := c.rows[[2]int{days, limit}]
	return rows, ok && c.until.Equal(until)
}

func (c *leaderboardCache) put(until time.Time, days, limit int, rows []assistant.LeaderboardEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.until.Equal(until) {
		if until.Before(c.until) {
			return // a request that started before the minute turned
		}
		c.until, c.rows = until, map[[2]int][]assistant.LeaderboardEntry{}
	}
	c.rows[[2]int{days, limit}] = rows
}

func (s *Server) leaderboard(ctx context.Context, in *leaderboardInput) (*leaderboardOutput, error) {
	until := s.Now().UTC().Truncate(time.Minute)
	since := until.AddDate(0, 0, -in.Days)
	rows, ok := s.leaderboards.get(until, in.Days, in.Limit)
	if !ok {
		var err error
		if rows, err = s.Citations.Leaderboard(ctx, since, until, in.Limit); err != nil {
			return nil, err
		}
		s.leaderboards.put(until, in.Days, in.Limit, rows)
	}
	out := &leaderboardOutput{}
	out.Body.Days, out.Body.Limit, out.Body.Since, out.Body.Until = in.Days, in.Limit, since, until
	out.Body.Entries = []leaderboardEntry{}
	for i, r := range rows {
		out.Body.Entries = append(out.Body.Entries, leaderboardEntry{
			Rank: i + 1, Type: string(r.Token.Type), Slug: r.Token.Slug, Token: r.Token.String(),
			Title: r.Title, Citations: r.Citations,
		})
	}
	return out, nil
}

// --- search ---

type searchInput struct {
	Q     string `query:"q" required:"true" minLength:"1" maxLength:"500" doc:"What to look for, in plain words, 1 to 500 characters."`
	Type  string `query:"type" enum:"framework,paper,blog" doc:"Only entities of this type."`
	Limit int    `query:"limit" default:"10" minimum:"1" maximum:"50" doc:"Results to return, 1 to 50."`
}

type searchResult struct {
	EntityCard
	Score float64 `json:"score" doc:"Relevance; higher is better, comparable within one response only."`
}

type searchOutput struct {
	Body struct {
		Query   string         `json:"query"`
		Results []searchResult `json:"results"`
	}
}

func (s *Server) search(ctx context.Context, in *searchInput) (*searchOutput, error) {
	hits, err := s.Retriever.Search(ctx, assistant.SearchQuery{Text: in.Q, Type: assistant.EntityType(in.Type), Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	out := &searchOutput{}
	out.Body.Query = in.Q
	out.Body.Results = []searchResult{}
	for _, h := range hits {
		out.Body.Results = append(out.Body.Results, searchResult{EntityCard: s.card(h.Entity), Score: roundScore(h.Score)})
	}
	return out, nil
}

// searchJSON answers GET /search with the bytes huma would write for
// search's output, each card from its remembered JSON (cardCache) rather
// than encoded again; MCP's search_knowledge uses the typed search. Its
// schema in the OpenAPI document is searchOutput's (routes.go). The
// answer is written piece by piece: publicCaching holds it in a buffer of
// its own to compute the ETag, so it is not assembled here first.
func (s *Server) searchJSON(ctx context.Context, in *searchInput) (*resolveRawOutput, error) {
	hits, err := s.Retriever.Search(ctx, assistant.SearchQuery{Text: in.Q, Type: assistant.EntityType(in.Type), Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	query, err := marshalJSON(in.Q)
	if err != nil {
		return nil, err
	}
	cards := make([][]byte, len(hits))
	var scores []byte // each result's score, as encoding/json writes it
	ends := make([]int, len(hits))
	size := len(searchStart) + len(query) + len(searchResults) + len(searchEnd)
	for i, h := range hits {
		cards[i] = s.cards.json(h.Entity, s.card)
		scores = appendJSONFloat(scores, roundScore(h.Score))
		ends[i] = len(scores)
		size += len(cards[i]) - 1 + len(scoreField) + 1
		if i > 0 {
			size++
		}
	}
	size += len(scores)
	return &resolveRawOutput{Body: func(hc huma.Context) {
		hc.SetHeader("Content-Type", "application/json")
		hc.SetHeader("Content-Length", strconv.Itoa(size))
		hc.SetStatus(http.StatusOK)
		w := hc.BodyWriter()
		w.Write(searchStart)
		w.Write(query)
		w.Write(searchResults)
		from := 0
		for i, c := range cards {
			if i > 0 {
				w.Write(comma)
			}
			// A result is its card's fields, then its score (searchResult).
			w.Write(c[:len(c)-1])
			w.Write(scoreField)
			w.Write(scores[from:ends[i]])
			w.Write(closeBrace)
			from = ends[i]
		}
		w.Write(searchEnd)
	}}, nil
}

// The constant pieces of searchJSON's answer.
var (
	searchStart   = []byte(`{"query":`)
	searchResults = []byte(`,"results":[`)
	searchEnd     = []byte("]}\n")
	scoreField    = []byte(`,"score":`)
	comma         = []byte(",")
	closeBrace    = []byte("}")
)

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-07 becomes e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func roundScore(f float64) float64 {
	return float64(int64(f*1e4+0.5)) / 1e4
}

// --- catalog ---

type catalogItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type catalogOutput struct {
	Body struct {
		Verticals  []catalogItem `json:"verticals" doc:"Business verticals, the allowed values of vertical."`
		Archetypes []catalogItem `json:"archetypes" doc:"Constraint archetypes, the allowed values of archetype_id."`
	}
}

func (s *Server) catalog(context.Context, *struct{}) (*catalogOutput, error) {
	out := &catalogOutput{}
	for _, v := range s.Catalog.Verticals {
		out.Body.Verticals = append(out.Body.Verticals, catalogItem(v))
	}
	for _, a := range s.Catalog.Archetypes {
		out.Body.Archetypes = append(out.Body.Archetypes, catalogItem(a))
	}
	return out, nil
}
