package api

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/diagnose"
)

// --- preview (interface.md section 4, D11) ---

// registerPreview registers POST /api/assistant/v1/preview with the settings
// of the other public operations (public is routes.go's helper).
func (s *Server) registerPreview(api huma.API, public func(huma.Operation) huma.Operation) {
	huma.Register(api, public(huma.Operation{
		OperationID: "previewArchetype", Method: http.MethodPost, Path: publicPrefix + "/preview",
		Summary: "Preview the framework applications for a constraint",
		Description: "The structured citation block the assistant would produce for a constraint archetype in a vertical: " +
			"the frameworks that apply, best first, each with why it applies, first steps and metrics in the vertical's terms, " +
			"and supporting papers and essays. Send `vertical` and exactly one of `archetype_id` (structured form) or " +
			"`free_text` (the service picks the archetype and reports its confidence and the alternatives). " +
			"Allowed ids: GET /api/assistant/v1/catalog. The same request always gives the same answer.",
		Errors:    []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
		Responses: jsonResponse(api, previewOutput{}),
	}), s.previewJSON)
}

type previewInput struct {
	Body struct {
		Vertical    string `json:"vertical" required:"true" doc:"A vertical id from GET /api/assistant/v1/catalog, e.g. saas."`
		ArchetypeID string `json:"archetype_id,omitempty" doc:"An archetype id from GET /api/assistant/v1/catalog (structured form). Send this or free_text, not both."`
		FreeText    string `json:"free_text,omitempty" maxLength:"4000" doc:"The constraint described in plain words, up to 4000 characters (free-text form); the service picks the archetype. Send this or archetype_id, not both."`
	}
}

type previewItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type previewAlternative struct {
	ArchetypeID string  `json:"archetype_id"`
	Name        string  `json:"name"`
	Score       float64 `json:"score" doc:"The matcher's probability for this archetype, 0 to 1."`
}

type previewMatch struct {
	Method       string               `json:"method" enum:"archetype_id,free_text" doc:"How the archetype was chosen."`
	Confidence   float64              `json:"confidence" doc:"1 for the structured form; for free text, the probability of the chosen archetype (0 to 1). Bands: high at 0.6 and above (right about 97% of the time on the development sets), medium from 0.35, low below (about half right: read the alternatives too)."`
	Alternatives []previewAlternative `json:"alternatives" doc:"For free text, the next most likely archetypes, best first; empty for the structured form."`
}

type frameworkApplication struct {
	Rank        int      `json:"rank" doc:"1 for the framework that fits best."`
	Token       string   `json:"token" example:"framework:theory-of-constraints" doc:"Citation token of the framework."`
	Title       string   `json:"title"`
	Application string   `json:"application" doc:"Why the framework applies to this constraint, in the vertical's terms."`
	FirstSteps  []string `json:"first_steps" doc:"What to do first, in the vertical's terms."`
	Metrics     []string `json:"metrics" doc:"What to measure, in the vertical's terms."`
	Supporting  []string `json:"supporting" doc:"Tokens of papers and essays that support the application."`
}

type previewOutput struct {
	Body struct {
		Vertical              previewItem            `json:"vertical" doc:"The vertical: id and name."`
		Archetype             previewItem            `json:"archetype" doc:"The archetype: id, name and description."`
		Match                 previewMatch           `json:"match"`
		FrameworkApplications []frameworkApplication `json:"framework_applications" doc:"Framework applications, best first; slice to keep the first few."`
		Citations             []string               `json:"citations" doc:"Every token the preview uses, each once; all resolve through /resolve."`
	}
}

// preview is the typed answer to POST /preview (MCP's preview tool);
// the HTTP route writes the same bytes from remembered pieces
// (previewJSON).
func (s *Server) preview(ctx context.Context, in *previewInput) (*previewOutput, error) {
	p, err := s.Diagnosis.Preview(ctx, diagnose.PreviewRequest{
		Vertical: in.Body.Vertical, ArchetypeID: in.Body.ArchetypeID, FreeText: in.Body.FreeText,
	})
	if err != nil {
		return nil, problemFromError(ctx, s.Logger, err)
	}
	return s.previewOutputOf(ctx, p, s.Logger)
}

// previewOutputOf attaches titles to a preview: its typed answer. A
// failure is logged to logger.
func (s *Server) previewOutputOf(ctx context.Context, p *diagnose.Preview, logger *slog.Logger) (*previewOutput, error) {
	// Titles come from the knowledge store, so tokens and titles always
	// agree with /resolve.
	found, err := s.Knowledge.Entities(ctx, p.Citations)
	if err != nil {
		return nil, problemFromError(ctx, logger, err)
	}
	out := &previewOutput{}
	b := &out.Body
	b.Vertical = previewItem{ID: p.Vertical.ID, Name: p.Vertical.Name}
	b.Archetype = previewItem{ID: p.Archetype.ID, Name: p.Archetype.Name, Description: p.Archetype.Description}
	b.Match = previewMatch{Method: p.Method, Confidence: p.Confidence, Alternatives: []previewAlternative{}}
	for _, a := range p.Alternatives {
		b.Match.Alternatives = append(b.Match.Alternatives, previewAlternative{ArchetypeID: a.ArchetypeID, Name: a.Name, Score: a.Probability})
	}
	b.FrameworkApplications = []frameworkApplication{}
	b.Citations = []string{}
	cited := map[assistant.Token]bool{}
	cite := func(t assistant.Token) {
		if !cited[t] {
			cited[t] = true
			b.Citations = append(b.Citations, t.String())
		}
	}
	for _, app := range p.Applications {
		fw, ok := found[app.Framework]
		if !ok {
			continue // an entity removed from the store is never cited
		}
		fa := frameworkApplication{
			Rank: len(b.FrameworkApplications) + 1, Token: app.Framework.String(), Title: fw.Title,
			Application: app.Application, FirstSteps: app.FirstSteps, Metrics: app.Metrics, Supporting: []string{},
		}
		cite(app.Framework)
		for _, t := range app.Supporting {
			if _, ok := found[t]; ok {
				fa.Supporting = append(fa.Supporting, t.String())
				cite(t)
			}
		}
		b.FrameworkApplications = append(b.FrameworkApplications, fa)
	}
	return out, nil
}

// A preview's answer is its match (how the archetype was chosen: the
// only part that depends on the free text) between pieces that depend
// only on the (vertical, archetype) pair and the knowledge: the vertical
// and the archetype before it, the framework applications and citations
// after it. previewMemo remembers those pieces, as huma would encode
// them, per pair at one knowledge version, so that a preview encodes only
// its match. The pairs are bounded by the catalog.
type previewMemo struct {
	mu      sync.Mutex
	version int64
	pieces  map[previewPair]*previewPieces
}

type previewPair struct{ vertical, archetype string }

// previewPieces are the encoded parts of a preview answer around its
// match: head is `{"vertical":...,"archetype":...,"match":` and tail is
// `,"framework_applications":...,"citations":...}` and the newline.
type previewPieces struct {
	head, tail []byte
}

func (m *previewMemo) get(version int64, pair previewPair) (*previewPieces, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version != version {
		return nil, false
	}
	p, ok := m.pieces[pair]
	return p, ok
}

func (m *previewMemo) put(version int64, pair previewPair, p *previewPieces) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version != version || m.pieces == nil {
		m.version, m.pieces = version, map[previewPair]*previewPieces{}
	}
	m.pieces[pair] = p
}

// previewJSON answers POST /preview with the bytes huma would write for
// preview's output, in one write with its length: the match encoded for
// this request between the remembered pieces of its pair.
func (s *Server) previewJSON(ctx context.Context, in *previewInput) (*resolveRawOutput, error) {
	answer, err := s.previewAnswerOf(ctx, in, s.Logger)
	if err != nil {
		return nil, err
	}
	return &resolveRawOutput{Body: func(hc huma.Context) { writeAssembled(hc, answer.appendTo) }}, nil
}

// previewAnswer is a preview answer as previewJSON writes it: the match
// of this request between the remembered pieces of its pair.
type previewAnswer struct {
	match  *diagnose.Preview
	pieces *previewPieces
}

// appendTo appends the answer's body to b.
func (a previewAnswer) appendTo(b []byte) []byte {
	b = append(b, a.pieces.head...)
	b = appendPreviewMatch(b, a.match)
	return append(b, a.pieces.tail...)
}

// previewAnswerOf returns the answer to in, or the problem huma writes; a
// failure is logged to logger.
func (s *Server) previewAnswerOf(ctx context.Context, in *previewInput, logger *slog.Logger) (previewAnswer, error) {
	p, err := s.Diagnosis.PreviewMatch(ctx, diagnose.PreviewRequest{
		Vertical: in.Body.Vertical, ArchetypeID: in.Body.ArchetypeID, FreeText: in.Body.FreeText,
	})
	if err != nil {
		return previewAnswer{}, problemFromError(ctx, logger, err)
	}
	version, err := s.Knowledge.KnowledgeVersion(ctx)
	if err != nil {
		return previewAnswer{}, problemFromError(ctx, logger, err)
	}
	pair := previewPair{p.Vertical.ID, p.Archetype.ID}
	pieces, ok := s.previews.get(version, pair)
	if !ok {
		if pieces, err = s.previewPiecesOf(ctx, p, logger); err != nil {
			return previewAnswer{}, err
		}
		s.previews.put(version, pair, pieces)
	}
	return previewAnswer{p, pieces}, nil
}

// previewPiecesOf encodes the pieces of p's pair from its typed answer.
func (s *Server) previewPiecesOf(ctx context.Context, p *diagnose.Preview, logger *slog.Logger) (*previewPieces, error) {
	full := *p
	var err error
	full.Applications, full.Citations, err = s.Diagnosis.Applications(p.Vertical.ID, p.Archetype.ID)
	if err != nil {
		return nil, problemFromError(ctx, logger, err)
	}
	out, err := s.previewOutputOf(ctx, &full, logger)
	if err != nil {
		return nil, err
	}
	b := &out.Body
	vertical, err := marshalJSON(b.Vertical)
	if err != nil {
		return nil, err
	}
	archetype, err := marshalJSON(b.Archetype)
	if err != nil {
		return nil, err
	}
	apps, err := marshalJSON(b.FrameworkApplications)
	if err != nil {
		return nil, err
	}
	citations, err := marshalJSON(b.Citations)
	if err != nil {
		return nil, err
	}
	head := slices.Concat([]byte(`{"vertical":`), vertical, []byte(`,"archetype":`), archetype, []byte(`,"match":`))
	tail := slices.Concat([]byte(`,"framework_applications":`), apps, []byte(`,"citations":`), citations, []byte("}\n"))
	return &previewPieces{head: head, tail: tail}, nil
}

// appendPreviewMatch appends the JSON of p's match (previewMatch) as huma
// would encode it: written directly when its strings need no escaping,
// through the encoder otherwise.
func appendPreviewMatch(b []byte, p *diagnose.Preview) []byte {
	plain := plainJSONString(p.Method)
	for _, a := range p.Alternatives {
		plain = plain && plainJSONString(a.ArchetypeID) && plainJSONString(a.Name)
	}
	if !plain {
		match := previewMatch{Method: p.Method, Confidence: p.Confidence, Alternatives: make([]previewAlternative, 0, len(p.Alternatives))}
		for _, a := range p.Alternatives {
			match.Alternatives = append(match.Alternatives, previewAlternative{ArchetypeID: a.ArchetypeID, Name: a.Name, Score: a.Probability})
		}
		encoded, err := marshalJSON(match)
		if err != nil { // strings and finite floats: cannot fail
			panic(err)
		}
		return append(b, encoded...)
	}
	b = append(b, `{"method":"`...)
	b = append(b, p.Method...)
	b = append(b, `","confidence":`...)
	b = appendJSONFloat(b, p.Confidence)
	b = append(b, `,"alternatives":[`...)
	for i, a := range p.Alternatives {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"archetype_id":"`...)
		b = append(b, a.ArchetypeID...)
		b = append(b, `","name":"`...)
		b = append(b, a.Name...)
		b = append(b, `","score":`...)
		b = appendJSONFloat(b, a.Probability)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
