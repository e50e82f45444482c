package client

import "time"

// Modes of the assistant (ChatRequest.Mode).
const (
	ModeOperator = "operator"
	ModeCustomer = "customer"
	ModeSupport  = "support"
	ModeSuccess  = "success"
)

// ChatRequest is the body of POST /api/v1/chat.
type ChatRequest struct {
	// Message is the user's message, 1 to 8000 characters after trimming.
	Message string `json:"message"`
	// History holds earlier turns, oldest first, at most 50.
	History []HistoryItem `json:"history,omitempty"`
	// Mode is the persona: ModeOperator (the default when empty),
	// ModeCustomer, ModeSupport or ModeSuccess.
	Mode string `json:"mode,omitempty"`
	// Vertical is an optional vertical id of the catalog (saas,
	// ecommerce...): the answer then uses that industry's words.
	Vertical string `json:"vertical,omitempty"`
	// Source labels the calling integration; recorded with usage, it
	// never changes the answer.
	Source string `json:"source,omitempty"`
}

// HistoryItem is an earlier turn of the conversation.
type HistoryItem struct {
	Role    string `json:"role"` // user or assistant
	Content string `json:"content"`
}

// ChatResponse is one turn's answer; the final event of a stream carries
// the same object.
type ChatResponse struct {
	// Response is Markdown with citation tokens such as
	// [framework:theory-of-constraints]; FindTokens lists them.
	Response       string      `json:"response"`
	ReasoningTrace []TraceItem `json:"reasoning_trace"`
	RagHits        []RagHit    `json:"rag_hits"`
	Confidence     Confidence  `json:"confidence"`
}

// TraceItem is one tool call the turn made, in order, Hop from 0.
type TraceItem struct {
	Hop           int    `json:"hop"`
	Tool          string `json:"tool"`
	InputSummary  string `json:"input_summary"`
	ResultSummary string `json:"result_summary"`
}

// RagHit is one knowledge entity the answer cites, in order of first
// citation.
type RagHit struct {
	Title   string  `json:"title"`
	Source  string  `json:"source"` // the citation token, type:slug
	URL     *string `json:"url"`    // nil when there is none
	Score   float64 `json:"score"`  // retrieval relevance, 0 to 1
	Snippet string  `json:"snippet"`
}

// Confidence is the verdict on a whole text: chat answers carry it and
// POST /api/v1/verify returns it.
type Confidence struct {
	// Score is VerifiedClaims / TotalClaims; for a chat answer, the lower
	// of that and Relevance.
	Score          float64 `json:"score"`
	Level          string  `json:"level"` // high, medium, low or none
	TotalClaims    int     `json:"totalClaims"`
	VerifiedClaims int     `json:"verifiedClaims"`
	// Relevance is how much of what was asked the verified claims
	// address, 0 to 1; chat answers only (nil elsewhere).
	Relevance *float64  `json:"relevance,omitempty"`
	Verdicts  []Verdict `json:"verdicts"`
}

// Verdict statuses and unsupported bases.
const (
	StatusVerified     = "verified"
	StatusUnsupported  = "unsupported"
	StatusContradicted = "contradicted"

	BasisNoEvidence   = "no_evidence"
	BasisInsufficient = "insufficient"
)

// Verdict is the check of one claim.
type Verdict struct {
	Claim     string    `json:"claim"`
	Status    string    `json:"status"`    // verified, unsupported or contradicted
	Citations []string  `json:"citations"` // tokens type:slug the claim cites
	Evidence  *Evidence `json:"evidence"`  // nil when no passage applies
	Score     float64   `json:"score"`
	Reason    string    `json:"reason"`
	// Basis is set on unsupported verdicts only: no_evidence or
	// insufficient.
	Basis string `json:"basis,omitempty"`
}

// Evidence is the passage that decided a verdict, and where it is in the
// entity card that Resolve returns for Type and Slug.
type Evidence struct {
	Type    string `json:"type"`
	Slug    string `json:"slug"`
	Snippet string `json:"snippet"` // the passage cut to 280 bytes, or the work's metadata line
	// Field is the card field the passage comes from, by its JSON name:
	// "title", "summary", "year", "authors[i]", "tags[i]", "key_ideas[i]"
	// (and "when_to_use[i]", "pitfalls[i]", entity fields the card does
	// not carry). Empty only when a model judge's quote cannot be located.
	Field string `json:"field"`
	// Start and End are the offsets of Quote in the field's text, in UTF-16
	// code units (JavaScript string indices); End is excluded. The year is
	// located in its decimal form.
	Start int `json:"start"`
	End   int `json:"end"`
	// Quote is the field's text from Start to End, exactly.
	Quote string `json:"quote"`
}

// VerifyRequest is the body of POST /api/v1/verify.
type VerifyRequest struct {
	// Text is checked claim by claim, 1 to 8000 characters, with citation
	// tokens written [type:slug].
	Text string `json:"text"`
	// Citations are at most 100 tokens type:slug (no brackets) that claims
	// citing nothing are checked against; each must resolve.
	Citations []string `json:"citations,omitempty"`
	// Threshold is the score, 0 to 1, a claim must reach to be verified;
	// nil takes the service's default. Float64 makes one.
	Threshold *float64 `json:"threshold,omitempty"`
	// Source labels the calling integration.
	Source string `json:"source,omitempty"`
}

// Float64 returns a pointer to v, for VerifyRequest.Threshold.
func Float64(v float64) *float64 { return &v }

// KeyInfo describes the API key making the request (GET /api/v1/key).
type KeyInfo struct {
	KeyID     string     `json:"key_id"`
	Workspace string     `json:"workspace"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"` // nil when the key does not expire
}

// KnowledgeStats counts the entities the assistant can cite.
type KnowledgeStats struct {
	Total      int `json:"total"`
	Frameworks int `json:"frameworks"`
	Papers     int `json:"papers"`
	Blogs      int `json:"blogs"`
}

// EntityCard is a knowledge entity as a hover card.
type EntityCard struct {
	Type       string   `json:"type"` // framework, paper or blog
	Slug       string   `json:"slug"`
	Token      string   `json:"token"` // type:slug
	Title      string   `json:"title"`
	Summary    string   `json:"summary"`
	URL        *string  `json:"url"`  // nil when there is none
	Year       *int     `json:"year"` // nil when unknown
	Authors    []string `json:"authors"`
	Tags       []string `json:"tags"`
	Archetypes []string `json:"archetypes"`
	KeyIdeas   []string `json:"key_ideas"`
	WhenToUse  []string `json:"when_to_use"` // situations it fits, in the words of someone in them
	Pitfalls   []string `json:"pitfalls"`    // common mistakes when applying it
	Related    []string `json:"related"`
	// Applications are how the catalog applies the framework to each
	// constraint archetype it serves (empty for other entities).
	Applications []CardApplication `json:"applications"`
}

// CardApplication is the catalog's application of a framework to one
// constraint archetype, as a card shows it.
type CardApplication struct {
	Archetype  string   `json:"archetype"`
	Text       string   `json:"text"`
	FirstSteps []string `json:"first_steps"`
}

// ResolveResponse is the answer of POST /api/assistant/v1/resolve (and of
// ResolveAll): both lists in request order, each token once.
type ResolveResponse struct {
	Resolved   []EntityCard      `json:"resolved"`
	Unresolved []UnresolvedToken `json:"unresolved"`
}

// Reasons a token is unresolved.
const (
	ReasonNotFound = "not_found"
	ReasonInvalid  = "invalid"
)

// UnresolvedToken is a token that did not resolve.
type UnresolvedToken struct {
	Type   string `json:"type"`
	Slug   string `json:"slug"`
	Reason string `json:"reason"` // not_found or invalid
}

// SearchParams are the query of GET /api/assistant/v1/search.
type SearchParams struct {
	Q     string // required, 1 to 500 characters
	Type  string // optional: framework, paper or blog
	Limit int    // 1 to 50; 0 takes the service's default (10)
}

// SearchResponse holds the search results, best first.
type SearchResponse struct {
	Query   string         `json:"query"`
	Results []SearchResult `json:"results"`
}

// SearchResult is a card with its relevance, comparable within one
// response only.
type SearchResult struct {
	EntityCard
	Score float64 `json:"score"`
}

// LeaderboardParams are the query of GET /api/assistant/v1/leaderboard;
// zero fields take the service's defaults (30 days, 10 entries).
type LeaderboardParams struct {
	Days  int // 1 to 365
	Limit int // 1 to 100
}

// Leaderboard ranks the most cited entities of a window.
type Leaderboard struct {
	Days    int                `json:"days"`
	Limit   int                `json:"limit"`
	Since   time.Time          `json:"since"` // inclusive
	Until   time.Time          `json:"until"` // exclusive
	Entries []LeaderboardEntry `json:"entries"`
}

// LeaderboardEntry is one ranked entity.
type LeaderboardEntry struct {
	Rank      int    `json:"rank"`
	Type      string `json:"type"`
	Slug      string `json:"slug"`
	Token     string `json:"token"`
	Title     string `json:"title"`
	Citations int    `json:"citations"`
}

// PreviewRequest is the body of POST /api/assistant/v1/preview: Vertical
// and exactly one of ArchetypeID and FreeText.
type PreviewRequest struct {
	Vertical    string `json:"vertical"`
	ArchetypeID string `json:"archetype_id,omitempty"`
	FreeText    string `json:"free_text,omitempty"`
}

// Preview is the citation block the assistant would produce for a
// constraint archetype in a vertical.
type Preview struct {
	Vertical              PreviewItem            `json:"vertical"`
	Archetype             PreviewItem            `json:"archetype"`
	Match                 PreviewMatch           `json:"match"`
	FrameworkApplications []FrameworkApplication `json:"framework_applications"`
	Citations             []string               `json:"citations"`
}

// PreviewItem names a vertical or an archetype.
type PreviewItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// PreviewMatch says how the archetype was chosen.
type PreviewMatch struct {
	Method       string               `json:"method"`     // archetype_id or free_text
	Confidence   float64              `json:"confidence"` // 1 for the structured form
	Alternatives []PreviewAlternative `json:"alternatives"`
}

// PreviewAlternative is another likely archetype of a free-text preview.
type PreviewAlternative struct {
	ArchetypeID string  `json:"archetype_id"`
	Name        string  `json:"name"`
	Score       float64 `json:"score"`
}

// FrameworkApplication is one framework applied to the constraint.
type FrameworkApplication struct {
	Rank        int      `json:"rank"`
	Token       string   `json:"token"`
	Title       string   `json:"title"`
	Application string   `json:"application"`
	FirstSteps  []string `json:"first_steps"`
	Metrics     []string `json:"metrics"`
	Supporting  []string `json:"supporting"`
}

// Catalog lists the verticals and constraint archetypes, in catalog order.
type Catalog struct {
	Verticals  []CatalogItem `json:"verticals"`
	Archetypes []CatalogItem `json:"archetypes"`
}

// CatalogItem is a vertical or an archetype.
type CatalogItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}
