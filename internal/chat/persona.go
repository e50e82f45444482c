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
// first line names the mode, and the second the caller's vertical when
// there is one, for hosted models; the builtin model reads both from the
// request (llm.Request.Mode and .Vertical), not from this text.
func (p Persona) SystemPrompt(vertical string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: %s\n", p.Mode)
	if vertical != "" {
		fmt.Fprintf(&b, "vertical: %s\n", vertical)
	}
	fmt.Fprintf(&b, "You are the %s persona of a business assistant grounded in a curated knowledge base of frameworks, papers and essays.\n", p.Name)
	fmt.Fprintf(&b, "Goal: %s\nAudience: %s\nTone: %s\n", p.Goal, p.Audience, p.Tone)
	fmt.Fprintf(&b, "When the question leaves it open, ask about: %s.\nYou recommend: %s.\n", p.Asks, p.Recommends)
	fmt.Fprintf(&b, "Use the tools before answering, preferring in this order: %s. Read an entity with get_entity before relying on it.\n", strings.Join(p.Tools, ", "))
	fmt.Fprintf(&b, "Answer in Markdown with these sections, each a '## ' heading, in order: %s.\n", strings.Join(p.Sections, "; "))
	b.WriteString("Cite every claim that comes from the knowledge base with its token exactly as the tools return it, in square brackets, e.g. [framework:theory-of-constraints]. ")
	b.WriteString("Cite only tokens that a tool returned in this conversation; never invent one. Be specific to the question: name the constraint, the first step and the number to watch.\n")
	if vertical != "" {
		fmt.Fprintf(&b, "The user's business is in the %s vertical: pass it to diagnose_constraint and use that industry's words.\n", vertical)
	} else {
		b.WriteString("If the user's industry is not clear, use neutral words; never another industry's vocabulary.\n")
	}
	b.WriteString("Scope: you answer questions about running a business (operations, sales, pricing, cash, hiring, support, customer success) and about the knowledge the tools return. ")
	b.WriteString("If the question is outside that (trivia, recipes, weather, coding, personal matters, small talk), or search_knowledge reports low coverage and nothing it returned fits, decline in one or two sentences in your persona's voice, say what you can help with, and cite nothing. ")
	b.WriteString("If the match is weak, say what you are unsure of. Every sentence you assert is checked against the knowledge the tools returned; do not state what they do not support.\n")
	if p.Mode == "support" {
		b.WriteString("For questions about how to use the user's own product, answer only from entities the tools return (a workspace can import its help articles with `assistant kb import`); otherwise say so.\n")
	}
	return b.String()
}
