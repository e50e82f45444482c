package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
)

// kbSubcommands lists the knowledge base commands of `assistant kb` (D23).
func kbSubcommands() []command {
	return []command{
		{"validate", "check the knowledge base as served (embedded corpus plus imports), and optionally files to import", kbValidate},
		{"import", "import entity files (a directory of .md files, .jsonl, .bib) in one transaction", kbImport},
		{"export", "write the knowledge base as served, as JSON lines", kbExport},
	}
}

// kbCommand dispatches `assistant kb <subcommand>`.
func kbCommand(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "kb", kbSubcommands(), args)
}

func kbValidate(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "kb validate [PATH...]",
		"Checks every rule of docs/knowledge-format.md on the knowledge base as serve\npresents it: the embedded corpus, with the entities imported into the\nconfigured database laid over it. With PATHs (as kb import takes them) it checks\nthe knowledge base as it would be after importing them, and changes nothing.")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	incoming, err := readImportPaths(fs.Args())
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return err
	}
	defer db.Close()
	kb, err := loadServed(ctx, db)
	if err != nil {
		return err
	}
	files, replaced := knowledge.Merge(kb.files, incoming)
	for _, f := range kb.overrides {
		fmt.Fprintf(e.stdout, "note: the imported %s replaces the embedded entity of that token\n", f.Entity.Token())
	}
	for _, f := range replaced {
		fmt.Fprintf(e.stdout, "note: %s would take the place of the existing %s\n", f.Name, f.Entity.Token())
	}
	if err := validationError(knowledge.Validate(files)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "ok: %d entities valid (%d embedded, %d imported, %d from the paths given)\n",
		len(files), kb.embedded, len(kb.files)-kb.embedded+len(kb.overrides), len(incoming))
	return nil
}

func kbImport(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "kb import [--archetype IDS] PATH...",
		"Imports entities into the configured database, all or nothing: files are\nvalidated together with the knowledge base they join, and one invalid file\nchanges nothing (the error names the file and field). A PATH is a directory of\n<type>/<slug>.md files (docs/knowledge-format.md), a .md file, a .jsonl file\n(what kb export writes) or a .bib file of papers (abstract becomes the\nsummary; keywords become tags, and archetype ids among them archetypes).\nImported entities survive restarts and upgrades, and replace embedded ones of\nthe same token.")
	archetypes := fs.String("archetype", "", "comma-separated archetype ids for imported entities that have none")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: kb import needs at least one PATH", errUsage)
	}
	var defaults []string
	for _, a := range strings.Split(*archetypes, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if !assistant.IsArchetype(a) {
			return fmt.Errorf("%w: --archetype: %q is not an archetype id; allowed: %s", errUsage, a, strings.Join(assistant.ArchetypeIDs, ", "))
		}
		defaults = append(defaults, a)
	}
	incoming, err := readImportPaths(fs.Args())
	if err != nil {
		return err
	}
	for i := range incoming {
		if len(incoming[i].Entity.Archetypes) == 0 {
			incoming[i].Entity.Archetypes = defaults
		}
	}
	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return err
	}
	defer db.Close()
	kb, err := loadServed(ctx, db)
	if err != nil {
		return err
	}
	files, replaced := knowledge.Merge(kb.files, incoming)
	if err := validationError(knowledge.Validate(files)); err != nil {
		return fmt.Errorf("nothing imported: %w", err)
	}
	entities := make([]assistant.Entity, len(incoming))
	for i, f := range incoming {
		entities[i] = f.Entity
	}
	res, err := db.ImportEntities(ctx, entities)
	if err != nil {
		return fmt.Errorf("nothing imported: %w", err)
	}
	for _, f := range replaced {
		fmt.Fprintf(e.stdout, "note: %s takes the place of the existing %s\n", f.Name, f.Entity.Token())
	}
	fmt.Fprintf(e.stdout, "imported %d entities: %d new, %d updated, %d unchanged\n",
		len(entities), res.Inserted, res.Updated, res.Unchanged)
	return nil
}

func kbExport(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "kb export --format jsonl",
		"Writes the knowledge base as serve presents it (the embedded corpus with the\nimported entities laid over it) to stdout, one JSON object per entity and\nline, with the keys of docs/knowledge-format.md and an \"origin\" key. kb import\nreads the same format.")
	format := fs.String("format", "jsonl", "output format; jsonl is the only one")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	if *format != "jsonl" {
		return fmt.Errorf("%w: --format %q is not supported; use jsonl", errUsage, *format)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return err
	}
	defer db.Close()
	kb, err := loadServed(ctx, db)
	if err != nil {
		return err
	}
	entities := make([]assistant.Entity, len(kb.files))
	for i, f := range kb.files {
		entities[i] = f.Entity
	}
	return knowledge.WriteJSONL(e.stdout, entities)
}

// servedKnowledge is the knowledge base as serve presents it.
type servedKnowledge struct {
	files     []knowledge.File // embedded files, with imported ones laid over them
	embedded  int              // how many embedded files there are
	overrides []knowledge.File // imported files that replace an embedded one
}

// loadServed reads the embedded corpus and the entities imported into db.
// It does not write: a fresh database simply has no imports yet.
func loadServed(ctx context.Context, db assistant.KnowledgeStore) (servedKnowledge, error) {
	embedded, err := knowledge.Embedded()
	if err != nil {
		return servedKnowledge{}, fmt.Errorf("reading the embedded knowledge base: %w", err)
	}
	for i := range embedded {
		embedded[i].Entity.Origin = assistant.OriginEmbedded
	}
	stored, err := db.AllEntities(ctx)
	if err != nil {
		return servedKnowledge{}, err
	}
	var imported []knowledge.File
	for _, ent := range stored {
		if ent.Origin == assistant.OriginImported {
			// An imported entity may come from BibTeX and lack body sections.
			bib := len(ent.KeyIdeas) == 0 && len(ent.WhenToUse) == 0 && len(ent.Pitfalls) == 0
			imported = append(imported, knowledge.File{Name: "imported " + ent.Token().String(), Entity: ent, Bibliographic: bib})
		}
	}
	files, overrides := knowledge.Merge(embedded, imported)
	return servedKnowledge{files: files, embedded: len(embedded), overrides: overrides}, nil
}

// readImportPaths parses the files kb import and kb validate take: a
// directory of <type>/<slug>.md files, a .md, .jsonl or .bib file. Every
// entity gets OriginImported; problems name the file.
func readImportPaths(paths []string) ([]knowledge.File, error) {
	var out []knowledge.File
	for _, path := range paths {
		files, err := readImportPath(path)
		if err != nil {
			return nil, err
		}
		for i := range files {
			files[i].Entity.Origin = assistant.OriginImported
		}
		out = append(out, files...)
	}
	return out, nil
}

func readImportPath(path string) ([]knowledge.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, assistant.Errorf(assistant.EInvalid, "%v", err)
	}
	if info.IsDir() {
		files, err := knowledge.ReadDir(os.DirFS(path))
		var fe *knowledge.FieldError
		if errors.As(err, &fe) {
			fe.File = filepath.Join(path, fe.File)
		}
		for i := range files {
			files[i].Name = filepath.Join(path, files[i].Name)
		}
		if err == nil && len(files) == 0 {
			err = assistant.Errorf(assistant.EInvalid, "%s: no <type>/<slug>.md files found", path)
		}
		return files, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return knowledge.ParseJSONL(path, data)
	case ".bib", ".bibtex":
		return knowledge.ParseBibTeX(path, data)
	case ".md":
		ent, err := knowledge.Parse(path, data)
		return []knowledge.File{{Name: path, Entity: ent}}, err
	default:
		return nil, assistant.Errorf(assistant.EInvalid, "%s: unknown format; use a directory, .md, .jsonl or .bib", path)
	}
}

// validationError joins the problems Validate found into one error, one
// problem a line, or returns nil.
func validationError(problems []*knowledge.FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.Error()
	}
	return assistant.Errorf(assistant.EInvalid, "%d problems in the knowledge base:\n%s", len(problems), strings.Join(lines, "\n"))
}
