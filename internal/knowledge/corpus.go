package knowledge

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

//go:embed corpus
var embedded embed.FS

// Embedded returns the parsed default corpus shipped in the binary.
func Embedded() ([]File, error) {
	sub, err := fs.Sub(embedded, "corpus")
	if err != nil {
		return nil, err
	}
	return ReadDir(sub)
}

// ReadDir parses every <type>/<slug>.md file under the root of fsys, in
// lexical order. A file whose front matter disagrees with its path is an
// error naming the file. Files that are not .md are ignored.
func ReadDir(fsys fs.FS) ([]File, error) {
	var files []File
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".md" {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		e, err := Parse(name, data)
		if err != nil {
			return err
		}
		wantType, wantSlug := path.Dir(name), strings.TrimSuffix(path.Base(name), ".md")
		if string(e.Type) != wantType {
			return &FieldError{File: name, Field: "type", Message: fmt.Sprintf("%q does not match the folder %q", e.Type, wantType)}
		}
		if e.Slug != wantSlug {
			return &FieldError{File: name, Field: "slug", Message: fmt.Sprintf("%q does not match the file name %q", e.Slug, wantSlug)}
		}
		files = append(files, File{Name: name, Entity: e})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, err
}

// LoadEmbedded validates the embedded corpus, its aliases and premises, and
// synchronises the corpus into the store. An invalid corpus is a build
// defect, so it is refused as a whole.
func LoadEmbedded(ctx context.Context, store assistant.KnowledgeStore) (assistant.SyncResult, error) {
	files, err := Embedded()
	if err != nil {
		return assistant.SyncResult{}, fmt.Errorf("reading the embedded knowledge base: %w", err)
	}
	if problems := Validate(files); len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return assistant.SyncResult{}, fmt.Errorf("the embedded knowledge base is invalid: %w", errors.Join(errs...))
	}
	aliases, err := EmbeddedAliases()
	if err != nil {
		return assistant.SyncResult{}, err
	}
	if problems := aliases.Check(files); len(problems) > 0 {
		return assistant.SyncResult{}, fmt.Errorf("the embedded knowledge base's aliases are invalid: %w", errors.Join(problems...))
	}
	if problems := DefaultPremises().Check(files); len(problems) > 0 {
		return assistant.SyncResult{}, fmt.Errorf("the embedded knowledge base's premises are invalid: %w", errors.Join(problems...))
	}
	entities := make([]assistant.Entity, len(files))
	for i, f := range files {
		entities[i] = f.Entity
		entities[i].Origin = assistant.OriginEmbedded
	}
	return store.SyncEntities(ctx, assistant.OriginEmbedded, entities)
}
