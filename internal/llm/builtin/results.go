package builtin

import (
	"encoding/json"
	"unsafe"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/memo"
	"github.com/constraintlab/assistant/internal/tooling"
)

// The tool results as the builtin model reads them: the fields of
// tooling's result types that it uses, under the same JSON names and with
// the same types (TestResultsMirrorTooling checks it). Every round of a
// turn decodes the results so far again, and leaving out what is never
// read (above all the search hits' summaries, most of a search result)
// makes that cheaper.

// searchResult is what is read of a tooling.SearchResult.
type searchResult struct {
	Query    string        `json:"query"`
	Hits     []searchHit   `json:"hits"`
	Coverage float64       `json:"coverage"`
	Missing  []string      `json:"missing,omitempty"`
	Scope    tooling.Scope `json:"scope"`
}

// searchHit is what is read of a tooling.SearchHit.
type searchHit struct {
	Token      string   `json:"token"`
	Title      string   `json:"title"`
	Archetypes []string `json:"archetypes"`
	WhenToUse  []string `json:"when_to_use,omitempty"`
	Score      float64  `json:"score"`
	Imported   bool     `json:"imported,omitempty"`
}

// entityResult is what is read of a tooling.EntityResult.
type entityResult struct {
	Token      string   `json:"token"`
	Found      bool     `json:"found"`
	Title      string   `json:"title,omitempty"`
	Authors    []string `json:"authors,omitempty"`
	Summary    string   `json:"summary,omitempty"`
	KeyIdeas   []string `json:"key_ideas,omitempty"`
	WhenToUse  []string `json:"when_to_use,omitempty"`
	Pitfalls   []string `json:"pitfalls,omitempty"`
	Archetypes []string `json:"archetypes,omitempty"`
	Presumes   []string `json:"presumes,omitempty"`
}

// diagnoseResult is what is read of a tooling.DiagnoseResult.
type diagnoseResult struct {
	Band         string             `json:"band"`
	Matches      []diagnoseMatch    `json:"matches"`
	Applications []diagnoseApplying `json:"applications"`
	Metrics      []string           `json:"metrics,omitempty"`
}

// diagnoseMatch is what is read of a tooling.DiagnoseMatch.
type diagnoseMatch struct {
	ArchetypeID string  `json:"archetype_id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Probability float64 `json:"probability"`
}

// diagnoseApplying is what is read of a tooling.DiagnoseApplying.
type diagnoseApplying struct {
	Token       string   `json:"token"`
	Application string   `json:"application"`
	FirstSteps  []string `json:"first_steps"`
	Metrics     []string `json:"metrics"`
	Supporting  []string `json:"supporting"`
	// The card's wording, when the vertical's differs.
	CardApplication string   `json:"card_application,omitempty"`
	CardFirstSteps  []string `json:"card_first_steps,omitempty"`
}

// decoded is a tool result as decode returns it: the value, and whether
// the JSON decoded.
type decoded[R any] struct {
	result R
	ok     bool
}

// The memos of decode, one per kind of result. Each round of a turn
// decodes again the tool results of the rounds before (a search result
// two or three times, a diagnosis twice), and a knowledge-base entity
// read by one turn is often read by the next. A few hundred results
// cover the turns under way; the memo starts again when full.
var (
	// A decoded result holds about the bytes of its JSON again.
	searchResults   = texts[decoded[searchResult]](256, 256<<10, 0.05, 2)
	entityResults   = texts[decoded[entityResult]](256, 256<<10, 0.05, 2)
	diagnoseResults = texts[decoded[diagnoseResult]](256, 256<<10, 0.05, 2)
)

// decode returns the tool result in content, decoded into R, and whether
// it decoded, remembered in results. The result is shared: its lists must
// never be modified or appended to.
func decode[R any](results *memo.Bounded[string, decoded[R]], content string) (R, bool) {
	d := results.Get(content, func(content string) decoded[R] {
		var d decoded[R]
		d.ok = json.Unmarshal(readOnlyBytes(content), &d.result) == nil
		return d
	})
	return d.result, d.ok
}

// readOnlyBytes is s as a byte slice without copying it, for
// json.Unmarshal, which only reads its input and copies every string it
// decodes out of it: converting a tool result (several KB) copied it
// once per result, about half of what decoding it allocated. The slice
// must never be written to.
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// A caller in this process (the chat turn) gives the search and diagnosis
// results as values (llm.Message.Result), which spares encoding them and
// decoding them again: they are read into the same types, with what
// their JSON would decode to (a list the JSON leaves out when empty is
// nil), remembered per result, since every round reads the results of
// the rounds before. TestResultValuesReadAsJSON compares the two.
var (
	searchValues   = memo.Bounded[*tooling.SearchResult, searchResult]{Max: 256}
	diagnoseValues = memo.Bounded[*tooling.DiagnoseResult, diagnoseResult]{Max: 256}
)

// searchOf returns the search result a tool message carries, and whether
// it has one.
func searchOf(m llm.Message) (searchResult, bool) {
	if r, ok := m.Result.(*tooling.SearchResult); ok && r != nil {
		return searchValues.Get(r, readSearch), true
	}
	return decode(searchResults, m.Content)
}

// diagnosisOf returns the diagnosis a tool message carries, and whether
// it has one.
func diagnosisOf(m llm.Message) (diagnoseResult, bool) {
	if r, ok := m.Result.(*tooling.DiagnoseResult); ok && r != nil {
		return diagnoseValues.Get(r, readDiagnosis), true
	}
	return decode(diagnoseResults, m.Content)
}

func readSearch(r *tooling.SearchResult) searchResult {
	out := searchResult{Query: r.Query, Coverage: r.Coverage, Missing: orNil(r.Missing), Scope: r.Scope}
	out.Scope.Business, out.Scope.OffTopic, out.Scope.Understood = orNil(r.Scope.Business), orNil(r.Scope.OffTopic), orNil(r.Scope.Understood)
	if r.Hits != nil {
		out.Hits = make([]searchHit, len(r.Hits))
		for i, h := range r.Hits {
			out.Hits[i] = searchHit{Token: h.Token, Title: h.Title, Archetypes: h.Archetypes, WhenToUse: orNil(h.WhenToUse), Score: h.Score, Imported: h.Imported}
		}
	}
	return out
}

func readDiagnosis(r *tooling.DiagnoseResult) diagnoseResult {
	out := diagnoseResult{Band: r.Band, Metrics: orNil(r.Metrics)}
	if r.Matches != nil {
		out.Matches = make([]diagnoseMatch, len(r.Matches))
		for i, m := range r.Matches {
			out.Matches[i] = diagnoseMatch{ArchetypeID: m.ArchetypeID, Name: m.Name, Description: m.Description, Probability: m.Probability}
		}
	}
	if r.Applications != nil {
		out.Applications = make([]diagnoseApplying, len(r.Applications))
		for i, a := range r.Applications {
			out.Applications[i] = diagnoseApplying{Token: a.Token, Application: a.Application, FirstSteps: a.FirstSteps,
				Metrics: a.Metrics, Supporting: a.Supporting, CardApplication: a.CardApplication, CardFirstSteps: orNil(a.CardFirstSteps)}
		}
	}
	return out
}

// orNil is list as its JSON under omitempty decodes: nil when empty.
func orNil(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list
}
