package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestMiddlewareNeverAsksThePath reads the package's source: no
// middleware (a function from http.Handler to http.Handler, with every
// closure inside it) decides by the request's path. Each surface is
// mounted with its own chain in routes.go, so a middleware applies to
// every request it sees.
func TestMiddlewareNeverAsksThePath(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var middleware int
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n, found := pathDecisions(fset, f)
		middleware += n
		for _, where := range found {
			t.Errorf("%s: a middleware decides by the request path", where)
		}
	}
	if middleware < 12 {
		t.Errorf("found %d middleware, want at least 12: the check no longer recognises them", middleware)
	}
}

// TestPathDecisionsAreFound shows that the check above can fail.
func TestPathDecisionsAreFound(t *testing.T) {
	const src = `package api
func apiOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
func limited(lim int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case limitedPaths[r.URL.Path]:
			}
			next.ServeHTTP(w, r)
		})
	}
}
func logs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log(r.URL.Path) // a value, not a decision
		next.ServeHTTP(w, r)
	})
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, found := pathDecisions(fset, f)
	if n != 3 || len(found) != 2 {
		t.Errorf("found %d middleware and %d decisions by path (%v), want 3 and 2", n, len(found), found)
	}
}

// pathDecisions returns how many middleware f declares and where one of
// them tests the request path in a condition (if, switch, case).
func pathDecisions(fset *token.FileSet, f *ast.File) (int, []string) {
	var n int
	var found []string
	ast.Inspect(f, func(node ast.Node) bool {
		var typ *ast.FuncType
		var body *ast.BlockStmt
		switch fn := node.(type) {
		case *ast.FuncDecl:
			typ, body = fn.Type, fn.Body
		case *ast.FuncLit:
			typ, body = fn.Type, fn.Body
		default:
			return true
		}
		if body == nil || !isMiddleware(typ) {
			return true
		}
		n++
		ast.Inspect(body, func(node ast.Node) bool {
			var conds []ast.Expr
			switch s := node.(type) {
			case *ast.IfStmt:
				conds = append(conds, s.Cond)
			case *ast.SwitchStmt:
				if s.Tag != nil {
					conds = append(conds, s.Tag)
				}
			case *ast.CaseClause:
				conds = append(conds, s.List...)
			}
			for _, c := range conds {
				if readsPath(c) {
					found = append(found, fset.Position(c.Pos()).String())
				}
			}
			return true
		})
		return false // closures inside were inspected with the body
	})
	return n, found
}

// isMiddleware reports whether typ is func(http.Handler) http.Handler.
func isMiddleware(typ *ast.FuncType) bool {
	isHandler := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == "http" && sel.Sel.Name == "Handler"
	}
	params, results := typ.Params.List, typ.Results
	return len(params) == 1 && len(params[0].Names) <= 1 && isHandler(params[0].Type) &&
		results != nil && len(results.List) == 1 && isHandler(results.List[0].Type)
}

// readsPath reports whether e reads the request's path (r.URL.Path,
// r.URL.RawPath, r.RequestURI).
func readsPath(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(node ast.Node) bool {
		sel, ok := node.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch sel.Sel.Name {
		case "Path", "RawPath":
			if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "URL" {
				found = true
			}
		case "RequestURI":
			found = true
		}
		return !found
	})
	return found
}
