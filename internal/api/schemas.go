package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Surfaces other than the huma operations (the MCP tools, the
// OpenAI-compatible facade's mapping onto a chat request) check their
// input with the same JSON Schemas the huma operations derive from the
// same Go types, and with huma's validator: one set of rules and messages
// for every way into a handler.

// checkValue validates v (any value that marshals to JSON) against schema,
// resolving references in reg. Locations start with prefix ("body" for the
// error shapes of the HTTP API, "" for MCP arguments).
func checkValue(reg huma.Registry, schema *huma.Schema, v any, prefix string) []*huma.ErrorDetail {
	var val any
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return []*huma.ErrorDetail{{Location: prefix, Message: "cannot be encoded as JSON"}}
		}
		raw = b
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return []*huma.ErrorDetail{{Location: prefix, Message: "must be JSON: " + err.Error()}}
	}
	pb := huma.NewPathBuffer([]byte(prefix), len(prefix))
	res := &huma.ValidateResult{}
	huma.Validate(reg, schema, pb, huma.ModeWriteToServer, val, res)
	out := make([]*huma.ErrorDetail, 0, len(res.Errors))
	for _, e := range res.Errors {
		if d, ok := e.(*huma.ErrorDetail); ok {
			out = append(out, d)
		} else {
			out = append(out, &huma.ErrorDetail{Location: prefix, Message: e.Error()})
		}
	}
	return out
}

// schemaSet derives self-contained JSON Schemas (no $ref, for MCP clients)
// from the API's Go types with huma, in its own registry so that nothing
// is added to the OpenAPI document. Unknown properties are allowed, as on
// the HTTP API (D4: unknown fields are ignored).
type schemaSet struct {
	reg huma.Registry
}

func newSchemaSet() *schemaSet {
	useProblemErrors() // huma's defaults of this process (arrays not nullable)
	return &schemaSet{reg: huma.NewMapRegistry("#/$defs/", huma.DefaultSchemaNamer)}
}

// schema returns the schema of t (inline at the top; named types it uses
// are in the set's registry).
func (ss *schemaSet) schema(t reflect.Type, hint string) *huma.Schema {
	s := ss.reg.Schema(t, false, hint)
	ss.nullablePointers(t, map[reflect.Type]bool{})
	seen := map[*huma.Schema]bool{}
	openObjects(s, seen)
	for _, d := range ss.reg.Map() {
		openObjects(d, seen)
	}
	return s
}

// nullablePointers marks the schema of every struct that t reaches
// through a pointer as nullable: such a field is null when absent (a
// verdict's evidence), which huma's schemas leave out and a client that
// validates results (an MCP client checks structured content against the
// output schema) would refuse.
func (ss *schemaSet) nullablePointers(t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			if d := ss.reg.Map()[huma.DefaultSchemaNamer(ft.Elem(), "")]; d != nil {
				d.Nullable = true
			}
		}
		ss.nullablePointers(ft, seen)
	}
}

// openObjects allows unknown properties in s and every schema inside it.
func openObjects(s *huma.Schema, seen map[*huma.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if b, ok := s.AdditionalProperties.(bool); ok && !b {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		openObjects(p, seen)
	}
	openObjects(s.Items, seen)
	for _, l := range [][]*huma.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, x := range l {
			openObjects(x, seen)
		}
	}
}

// check validates a JSON value against a schema of the set.
func (ss *schemaSet) check(schema *huma.Schema, raw json.RawMessage) []*huma.ErrorDetail {
	return checkValue(ss.reg, schema, raw, "")
}

// inline returns schema as a JSON object with every reference to the
// set's registry replaced by the schema it names.
func (ss *schemaSet) inline(schema *huma.Schema) map[string]any {
	defs := map[string]any{}
	for name, d := range ss.reg.Map() {
		defs[name] = toJSONValue(d)
	}
	out, _ := inlineRefs(toJSONValue(schema), defs, 0).(map[string]any)
	return out
}

func toJSONValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // schemas are built from static declarations
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// openAPIOnlyFormats are OpenAPI's numeric formats, which JSON Schema
// does not define; strict validators (Ajv) refuse unknown formats.
var openAPIOnlyFormats = map[string]bool{"int32": true, "int64": true, "float": true, "double": true}

// inlineRefs replaces {"$ref": "#/$defs/Name", ...} by the named schema
// (keeping the referring schema's own keywords, such as description).
// The API's types are not recursive; depth only guards against a mistake.
func inlineRefs(v any, defs map[string]any, depth int) any {
	if depth > 32 {
		panic("inlineRefs: schema nesting too deep (a recursive type?)")
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if ref, ok := x["$ref"].(string); ok {
			if def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
				for k, dv := range inlineRefs(def, defs, depth+1).(map[string]any) {
					out[k] = dv
				}
			}
		}
		for k, xv := range x {
			if k == "$ref" || (k == "format" && openAPIOnlyFormats[fmt.Sprint(xv)]) {
				continue
			}
			out[k] = inlineRefs(xv, defs, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, xv := range x {
			out[i] = inlineRefs(xv, defs, depth+1)
		}
		return out
	}
	return v
}
