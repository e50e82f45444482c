package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/constraintlab/assistant"

// moduleImports returns the module packages that the Go files of dir
// import, without and with its tests.
func moduleImports(t *testing.T, dir string) (code, withTests map[string]bool) {
	t.Helper()
	code, withTests = map[string]bool{}, map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			p = strings.TrimPrefix(p, modulePath+"/")
			withTests[p] = true
			if !strings.HasSuffix(f, "_test.go") {
				code[p] = true
			}
		}
	}
	return code, withTests
}

// TestArchitectureDocMatchesImports: the package map of
// docs/architecture.md lists, for each package, the module packages it
// may import. Each package imports no module package the map does not
// list for it, and each one listed is imported (by its code or tests).
func TestArchitectureDocMatchesImports(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	// Every package of the module, by its last path element.
	byName := map[string]string{}
	var all []string
	filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "../.." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			rel, _ := filepath.Rel("../..", path)
			if name := filepath.Base(rel); byName[name] == "" || strings.HasPrefix(rel, "internal/") {
				byName[name] = rel // "assistant" is internal/assistant, not cmd/assistant
			}
			all = append(all, rel)
		}
		return nil
	})
	row := regexp.MustCompile("(?m)^\\| (`[^|]+`) \\| [^|]* \\| ([^|]*) \\|$")
	tick := regexp.MustCompile("`([^`]+)`")
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		for _, pm := range tick.FindAllStringSubmatch(m[1], -1) {
			pkg := pm[1]
			documented[pkg] = true
			if pkg == "cmd/assistant" {
				continue // "everything"
			}
			allowed := map[string]bool{}
			for _, am := range tick.FindAllStringSubmatch(m[2], -1) {
				if p, ok := byName[am[1]]; ok {
					allowed[p] = true
				} else if slices.Contains(all, am[1]) {
					allowed[am[1]] = true
				}
			}
			code, withTests := moduleImports(t, filepath.Join("../..", pkg))
			for p := range code {
				if !allowed[p] {
					t.Errorf("%s imports %s, which docs/architecture.md does not list", pkg, p)
				}
			}
			for p := range allowed {
				if !withTests[p] {
					t.Errorf("docs/architecture.md lets %s import %s, which it does not", pkg, p)
				}
			}
		}
	}
	for _, p := range all {
		if !documented[p] && !strings.HasPrefix(p, "sdk") {
			t.Errorf("package %s is not in the package map of docs/architecture.md", p)
		}
	}
}
