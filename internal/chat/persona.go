package chat

import (
	_ "embed"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed personas.yaml
var personasYAML []byte

// Persona is the written definition of one chat mode.
type Persona struct {
	Mode        string   `yaml:"mode"`
	Name        string   `yaml:"name"`
	Goal        string   `yaml:"goal"`
	Audience    string   `yaml:"audience"`
	Tone        string   `yaml:"tone"`
	Asks        string   `yaml:"asks"`
	Recommends  string   `yaml:"recommends"`
	Tools       []string `yaml:"tools"`
	SearchTerms string   `yaml:"search_terms"`
	Sections    []string `yaml:"sections"`
}

// Modes are the chat modes in the order of interface.md; the first is the
// default.
var Modes = []string{"operator", "customer", "support", "success"}

// LoadPersonas parses the embedded persona definitions and checks that
// there is exactly one per mode, each complete.
func LoadPersonas() (map[string]Persona, error) {
	var list []Persona
	if err := yaml.Unmarshal(personasYAML, &list); err != nil {
		return nil, fmt.Errorf("parsing personas.yaml: %w", err)
	}
	out := map[string]Persona{}
	for _, p := range list {
		if p.Goal == "" || p.Tone == "" || len(p.Tools) == 0 || len(p.Sections) < 3 {
			return nil, fmt.Errorf("personas.yaml: persona %q is incomplete", p.Mode)
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

// SystemPrompt is the instruction given to the model for this persona. Its
// first line names the mode so that any model, the builtin one included,
// can plan by it.
func (p Persona) SystemPrompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: %s\n", p.Mode)
	fmt.Fprintf(&b, "You are the %s persona of a business assistant grounded in a curated knowledge base of frameworks, papers and essays.\n", p.Name)
	fmt.Fprintf(&b, "Goal: %s\nAudience: %s\nTone: %s\n", p.Goal, p.Audience, p.Tone)
	fmt.Fprintf(&b, "When the question leaves it open, ask about: %s.\nYou recommend: %s.\n", p.Asks, p.Recommends)
	fmt.Fprintf(&b, "Use the tools before answering, preferring in this order: %s. Read an entity with get_entity before relying on it.\n", strings.Join(p.Tools, ", "))
	fmt.Fprintf(&b, "Answer in Markdown with these sections, each a '## ' heading, in order: %s.\n", strings.Join(p.Sections, "; "))
	b.WriteString("Cite every claim that comes from the knowledge base with its token exactly as the tools return it, in square brackets, e.g. [framework:theory-of-constraints]. ")
	b.WriteString("Cite only tokens that a tool returned in this conversation; never invent one. Be specific to the question: name the constraint, the first step and the number to watch.\n")
	return b.String()
}
