package builtin

import (
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
