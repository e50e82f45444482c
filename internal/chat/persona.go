package chat

import "github.com/constraintlab/assistant/internal/persona"

// Persona is the record of one chat mode (internal/persona).
type Persona = persona.Persona

// Modes are the chat modes in the order of the interface; the first is the
// default.
var Modes = persona.Modes

// LoadPersonas returns the personas by mode (internal/persona/personas.yaml).
func LoadPersonas() (map[string]Persona, error) { return persona.Load() }
