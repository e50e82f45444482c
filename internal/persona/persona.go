// Package persona holds the chat's personas as data: one record per mode
// (personas.yaml, embedded), read both by the hosted-model system prompt
// (internal/chat) and by the builtin model (internal/llm/builtin). A
// record carries the persona's prompt fields, its tool order and search
// angle, the situations it recognises in a question with their cues and
// questions, the sections of its answer with what fills each, and what it
// says when it declines. Adding a persona is a change to personas.yaml and
// to the mode's enum (docs/personas.md).
//
// It depends on textproc (to match cues by stem) and yaml only.
package persona

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/textproc"
)

//go:embed personas.yaml
var personasYAML []byte

//go:embed actions.txt
var actionsTXT string

// IsAction reports whether a sentence opens with a verb of advice
// (actions.txt) in its bare form, as an instruction does: "Record every
// refund" says what to do, "Records show" and "Recording" do not.
func IsAction(sentence string) bool {
	// The list holds bare forms only, so a gerund ("Pricing is...") or a
	// plural noun ("Records show...") never matches.
	first := textproc.FirstWord(sentence)
	return first != "" && actions()[strings.ToLower(first)] && !namedTerm.MatchString(sentence)
}

// namedTerm finds a sentence that opens by naming a term and then says
// what it is ("Price fluctuation: discounts trigger buying ahead"): its
// first word is a noun there, not a verb of advice. Only two-word names
// whose second word is a noun by its ending count, since a one-word label
// is often a step of a method ("Plan: ...", "Follow up: ...").
var namedTerm = regexp.MustCompile(`^[A-Z][a-z]+ [a-z]+(ing|tion|sion|ment|ness|ity|ance|ence):`)

var actions = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(actionsTXT, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, w := range strings.Fields(line) {
			out[strings.ToLower(w)] = true
		}
	}
	return out
})

// DiagnosisLeads reports whether the persona lets a clear diagnosis lead
// its answer (Diagnosis "leads"), rather than only nudging which knowledge
// is read ("informs").
func (p Persona) DiagnosisLeads() bool { return p.Diagnosis == "leads" }

// Persona is the record of one chat mode.
type Persona struct {
	Mode       string `yaml:"mode"`
	Name       string `yaml:"name"`
	Goal       string `yaml:"goal"`
	Audience   string `yaml:"audience"`
	Tone       string `yaml:"tone"`
	Asks       string `yaml:"asks"`
	Recommends string `yaml:"recommends"`
	// Tools are the tools the persona calls, in the order it calls them.
	Tools []string `yaml:"tools"`
	// SearchAngle is added to the search for the question, so that the
	// knowledge found suits the persona ("" for none).
	SearchAngle string `yaml:"search_angle"`
	// Archetypes are the constraints the persona's questions are usually
	// about (catalog ids); knowledge that helps with none of them is read
	// only when it matches the question clearly better than what does
	// (empty: every constraint is the persona's).
	Archetypes []string `yaml:"archetypes"`
	// Diagnosis says what a confident diagnosis does in the answer:
	// "leads" (its frameworks come first) or "informs" (a nudge only: the
	// question is about a conversation or a fault, not the business).
	Diagnosis string `yaml:"diagnosis"`
	// ProductDocs marks the persona that answers how-to questions about
	// the user's own product, from imported help articles only;
	// NoProductDocs is what it says when none matches.
	ProductDocs   bool   `yaml:"product_docs"`
	NoProductDocs string `yaml:"no_product_docs"`
	// Help says what the persona helps with, in its voice: the body of a
	// decline.
	Help string `yaml:"help"`
	// Settle are the questions that would settle an unsure answer.
	Settle []string `yaml:"settle"`
	// DefaultSituation is the situation whose questions serve when the
	// question shows none ("" for none).
	DefaultSituation string      `yaml:"default_situation"`
	Situations       []Situation `yaml:"situations"`
	Sections         []Section   `yaml:"sections"`
}

// Situation is one situation a persona recognises in a question: a
// buyer's objection, an account's state, a kind of problem.
type Situation struct {
	ID string `yaml:"id"`
	// Cues are words or phrases that reveal the situation, matched by
	// stem ("ghosting" matches the cue "ghost").
	Cues []string `yaml:"cues"`
	// Terms are words added to the question when choosing the knowledge
	// that fits the situation.
	Terms string `yaml:"terms"`
	// Questions are what the persona asks in this situation (of the
	// buyer, or before fixing anything).
	Questions []string `yaml:"questions"`

	cues [][]string // the cues' stems
}

// Section is one section of the persona's answer.
type Section struct {
	Heading string `yaml:"heading"`
	// Fill lists what fills the section, in order (personas.yaml's header
	// names each kind).
	Fill []string `yaml:"fill"`
	// Count is the most lines the section holds.
	Count int `yaml:"count"`
	// Numbered sections are steps or checks in order.
	Numbered bool `yaml:"numbered"`
	// NamesDiagnosis puts the diagnosed constraint in the heading: named
	// when the diagnosis is clear, as a question between the two
	// likeliest when it is not.
	NamesDiagnosis bool `yaml:"names_diagnosis"`
}

// Fills the builtin model knows how to make.
var Fills = []string{"application", "ideas", "steps", "pitfalls", "evidence", "metrics", "questions", "checks"}

// Modes are the chat modes in the order of the interface; the first is
// the default.
var Modes = []string{"operator", "customer", "support", "success"}

// Load returns the personas by mode, parsed and checked once.
var Load = sync.OnceValues(func() (map[string]Persona, error) { return parse(personasYAML) })

func parse(data []byte) (map[string]Persona, error) {
	var list []Persona
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("parsing personas.yaml: %w", err)
	}
	out := map[string]Persona{}
	for _, p := range list {
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("personas.yaml: persona %q: %w", p.Mode, err)
		}
		for i := range p.Situations {
			s := &p.Situations[i]
			for _, cue := range s.Cues {
				// Cues of one stem count once ("renewal", "renew").
				if st := textproc.Stems(cue); !slices.ContainsFunc(s.cues, func(c []string) bool { return slices.Equal(c, st) }) {
					s.cues = append(s.cues, st)
				}
			}
		}
		out[p.Mode] = p
	}
	for _, m := range Modes {
		if _, ok := out[m]; !ok {
			return nil, fmt.Errorf("personas.yaml: no persona for mode %q", m)
		}
	}
	if len(out) != len(Modes) {
		return nil, fmt.Errorf("personas.yaml: %d personas for %d modes", len(out), len(Modes))
	}
	return out, nil
}

func (p Persona) check() error {
	switch {
	case p.Goal == "" || p.Tone == "" || p.Help == "":
		return fmt.Errorf("goal, tone and help are required")
	case len(p.Tools) == 0:
		return fmt.Errorf("no tools")
	case len(p.Sections) < 3:
		return fmt.Errorf("fewer than three sections")
	case len(p.Settle) == 0:
		return fmt.Errorf("no questions to settle an unsure answer")
	case p.ProductDocs && p.NoProductDocs == "":
		return fmt.Errorf("product_docs needs no_product_docs")
	case p.Diagnosis != "leads" && p.Diagnosis != "informs":
		return fmt.Errorf("diagnosis must be leads or informs, not %q", p.Diagnosis)
	}
	for _, a := range p.Archetypes {
		if !assistant.IsArchetype(a) {
			return fmt.Errorf("unknown archetype %q", a)
		}
	}
	for _, s := range p.Sections {
		if s.Heading == "" || s.Count < 1 || len(s.Fill) == 0 {
			return fmt.Errorf("section %q needs a heading, a count and a fill", s.Heading)
		}
		for _, f := range s.Fill {
			if !slices.Contains(Fills, f) {
				return fmt.Errorf("section %q: unknown fill %q (one of %s)", s.Heading, f, strings.Join(Fills, ", "))
			}
		}
	}
	for _, s := range p.Situations {
		if s.ID == "" || len(s.Cues) == 0 || s.Terms == "" {
			return fmt.Errorf("situation %q needs an id, cues and terms", s.ID)
		}
	}
	return nil
}

// Recognise returns the persona's situation whose cues the question shows
// most (the first listed on a tie), or the zero Situation. words are the
// question's words (textproc.Words).
func (p Persona) Recognise(words []string) Situation {
	text := make([]string, len(words))
	for i, w := range words {
		text[i] = textproc.Stem(w)
	}
	best, hits := Situation{}, 0
	for _, s := range p.Situations {
		n := 0
		for _, cue := range s.cues {
			if textproc.ContainsRun(text, cue) {
				n++
			}
		}
		if n > hits {
			best, hits = s, n
		}
	}
	return best
}

// Situation returns the persona's situation with the id, or the zero one.
func (p Persona) Situation(id string) Situation {
	for _, s := range p.Situations {
		if s.ID == id {
			return s
		}
	}
	return Situation{}
}
