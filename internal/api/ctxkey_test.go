package api

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"strings"
	"testing"
)

// TestContextKeysAreDistinct type-checks the package's own constant
// declarations and fails when two context keys (constants of type ctxKey,
// wherever they are declared) share a value, as keyCtxKey and rememberKey
// once did.
func TestContextKeysAreDistinct(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	// Only the declarations matter: keep each file's const and type
	// declarations, and check them without imports.
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var decls []ast.Decl
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && (g.Tok == token.CONST || g.Tok == token.TYPE) {
				decls = append(decls, g)
			}
		}
		files = append(files, &ast.File{Name: f.Name, Decls: decls})
	}
	conf := types.Config{Error: func(error) {}} // other declarations' unresolved names do not matter
	pkg, _ := conf.Check("api", fset, files, nil)
	byValue := map[string]string{}
	n := 0
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || c.Type().String() != "api.ctxKey" {
			continue
		}
		n++
		v := constant.Val(c.Val())
		key := c.Val().ExactString()
		if other, dup := byValue[key]; dup {
			t.Errorf("context keys %s and %s share the value %v", other, name, v)
		}
		byValue[key] = name
	}
	if n < 5 {
		t.Errorf("found %d context keys, want at least 5 (requestIDKey, routeKey, keyCtxKey, usageCtxKey, rememberKey)", n)
	}
}
