package builtin

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/constraintlab/assistant/internal/tooling"
)

// The builtin model decodes the tool results into its own types (only the
// fields it reads): each of their fields must be the field of tooling's
// type with the same name, JSON name and type, so that it decodes what
// the tool wrote.
func TestResultsMirrorTooling(t *testing.T) {
	mirrors := map[reflect.Type]reflect.Type{
		reflect.TypeFor[searchResult]():     reflect.TypeFor[tooling.SearchResult](),
		reflect.TypeFor[searchHit]():        reflect.TypeFor[tooling.SearchHit](),
		reflect.TypeFor[entityResult]():     reflect.TypeFor[tooling.EntityResult](),
		reflect.TypeFor[diagnoseResult]():   reflect.TypeFor[tooling.DiagnoseResult](),
		reflect.TypeFor[diagnoseMatch]():    reflect.TypeFor[tooling.DiagnoseMatch](),
		reflect.TypeFor[diagnoseApplying](): reflect.TypeFor[tooling.DiagnoseApplying](),
	}
	for own, theirs := range mirrors {
		for i := range own.NumField() {
			f := own.Field(i)
			g, ok := theirs.FieldByName(f.Name)
			if !ok {
				t.Errorf("%s.%s: no such field in %s", own.Name(), f.Name, theirs)
				continue
			}
			if f.Tag.Get("json") != g.Tag.Get("json") {
				t.Errorf("%s.%s: JSON tag %q, %s has %q", own.Name(), f.Name, f.Tag.Get("json"), theirs, g.Tag.Get("json"))
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice && mirrors[ft.Elem()] != nil {
				ft = reflect.SliceOf(mirrors[ft.Elem()])
			}
			if ft != g.Type {
				t.Errorf("%s.%s: type %s, %s has %s", own.Name(), f.Name, f.Type, theirs, g.Type)
			}
		}
	}
}

// A search or diagnosis given as a value (llm.Message.Result) must read as
// its JSON decodes: the same fields, the same nil lists.
func TestResultValuesReadAsJSON(t *testing.T) {
	searches := []tooling.SearchResult{
		{},
		{Query: "q", Hits: []tooling.SearchHit{}, Missing: []string{}, Scope: tooling.Scope{Business: []string{}, OffTopic: []string{}, Understood: []string{}}},
		{Query: "cash <flow> & \"runway\"", Coverage: 0.667, Missing: []string{"runway"}, Scope: tooling.Scope{InScope: true, Business: []string{"cash"}, OffTopic: []string{"x"}, Language: "de", Understood: []string{"cash"},
			FollowUp: true, Workspace: true, Care: "tax", CareSubject: "Tax", CareNote: "N.", Injection: true},
			Hits: []tooling.SearchHit{{Token: "framework:a", Title: "A", Summary: "S.", Archetypes: []string{"x", "y"}, Score: 1},
				{Token: "paper:b", Archetypes: []string{}, Score: 0.123, Imported: true}, {Token: "blog:c", Score: 1.0 / 3}}},
	}
	for i := range searches {
		readsAsJSON(t, "search", &searches[i], readSearch)
	}
	diagnoses := []tooling.DiagnoseResult{
		{},
		{Band: "low", Matches: []tooling.DiagnoseMatch{}, Applications: []tooling.DiagnoseApplying{}, Metrics: []string{}},
		{Vertical: "saas", Confidence: 0.5, Band: "high", Metrics: []string{"Churn"},
			Matches: []tooling.DiagnoseMatch{{ArchetypeID: "a", Name: "A", Description: "D", Probability: 0.61, Evidence: "e"}, {ArchetypeID: "b", Probability: 0.2}},
			Applications: []tooling.DiagnoseApplying{
				{Token: "framework:a", Title: "A", Application: "Do it.", FirstSteps: []string{"One.", "Two."}, Metrics: []string{"m"}, Supporting: []string{}, CardFirstSteps: []string{}},
				{Token: "framework:b", Application: "Do <b>.", Supporting: []string{"paper:c"}, CardApplication: "Do b.", CardFirstSteps: []string{"One."}}}},
	}
	for i := range diagnoses {
		readsAsJSON(t, "diagnosis", &diagnoses[i], readDiagnosis)
	}
}

// readsAsJSON checks that read gives for v what decoding v's JSON gives.
func readsAsJSON[V, R any](t *testing.T, what string, v *V, read func(*V) R) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var want R
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got := read(v); !reflect.DeepEqual(got, want) {
		t.Errorf("%s %s: read as %#v, its JSON as %#v", what, b, got, want)
	}
}
