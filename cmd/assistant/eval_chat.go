package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/config"
)

// evalChat runs a set of chat questions and measures the answers
// (docs/evaluation.md): `assistant eval chat (--file F | --from A) ...`.
// A blind set (a TSV with the header answereval.SetHeader) gets the figures
// of the blind evaluation; an older scope file of in|out<TAB>mode<TAB>question
// rows gets the scope counts it always had (D29).
func evalChat(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "eval chat (--file F | --from ANSWERS) [--answers OUT] [--ratings R] [--labels L] [--packet OUT] [--json] [--failures]",
		"Runs every row of a blind set (a TSV with the header\n"+
			"id<TAB>kind<TAB>mode<TAB>vertical<TAB>follows<TAB>message<TAB>note) as a chat turn with the\n"+
			"configured model provider (a followup row carries the turn it follows as history), and\n"+
			"prints the automatic figures of docs/evaluation.md: declines, confidence, repeated\n"+
			"sentences, hover-checkable citations and broken output; with --ratings, also the figures\n"+
			"of a rater's usefulness scores; with --labels, how often the answers cite the knowledge a\n"+
			"reader chose for each question. --from measures the answers of an earlier --answers file\n"+
			"instead of running the set again. Cards are resolved as /resolve serves them from the\n"+
			"configured database (the embedded corpus synchronised first, as serve does). The turns\n"+
			"are not recorded: no usage row and no citation event.\n\n"+
			"A file of in|out<TAB>mode<TAB>question rows (no header) is the older scope check: it\n"+
			"counts out-of-scope questions declined and in-scope ones answered (--json, --failures).")
	file := fs.String("file", "", "the set to run: a blind set TSV, or an in|out<TAB>mode<TAB>question file")
	from := fs.String("from", "", "measure the answers of this JSONL file (written by --answers) instead of running a set")
	answersOut := fs.String("answers", "", "write the raw answers here, one JSON object per row (id, kind, mode, note, request, response)")
	ratingsFile := fs.String("ratings", "", "a rater's scores, id<TAB>score 1-5<TAB>reason: add the rated figures")
	labelsFile := fs.String("labels", "", "a reader's choice of knowledge per question, id<TAB>fit<TAB>tokens<TAB>why: add how often the answers cite it")
	packetOut := fs.String("packet", "", "write the rater's packet here (Markdown): question, note, answer and cited cards, without the confidence")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	failures := fs.Bool("failures", false, "also list what failed: unchecked cited sentences, broken answers, repeated sentences, failed turns (a scope file: rows not declined or answered as expected)")
	cfg, err := parseConfig(e, fs, args, chatSettings)
	if err != nil {
		return err
	}
	switch {
	case (*file == "") == (*from == ""):
		return fmt.Errorf("%w: eval chat: give one of --file and --from", errUsage)
	case *from != "" && *answersOut != "":
		return fmt.Errorf("%w: eval chat: --answers writes the answers of a run; --from reads them", errUsage)
	}
	opts := blindOptions{answersOut: *answersOut, ratings: *ratingsFile, labels: *labelsFile, packet: *packetOut, asJSON: *asJSON, failures: *failures}
	if *from != "" {
		return measureAnswersFile(ctx, e, cfg, *from, opts)
	}
	blind, err := isBlindSet(*file)
	if err != nil {
		return err
	}
	if blind {
		return runBlindSet(ctx, e, cfg, *file, opts)
	}
	if *answersOut != "" || *ratingsFile != "" || *labelsFile != "" || *packetOut != "" {
		return fmt.Errorf("%w: eval chat: --answers, --ratings, --labels and --packet need a blind set (a TSV whose first line is the header %s)",
			errUsage, strings.ReplaceAll(answereval.SetHeader, "\t", "<TAB>"))
	}
	return evalScope(ctx, e, cfg, *file, *asJSON, *failures)
}

// isBlindSet reports whether the file's first line that is not blank or a
// comment is the blind set's header.
func isBlindSet(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return answereval.IsSet(line), nil
	}
	return false, sc.Err()
}

// evalScope is the older scope check (D29) over an
// in|out<TAB>mode<TAB>question file.
func evalScope(ctx context.Context, e env, cfg *config.Config, file string, asJSON, failures bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	cases, err := chat.ReadScopeCases(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	db, svc, err := openChatService(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := svc.EvaluateScope(ctx, cases)
	if err != nil {
		return err
	}
	if !failures {
		rep.Failures = nil
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	fmt.Fprintf(e.stdout, "n             %d\ndeclined_out  %d of %d\nanswered_in   %d of %d\n", rep.N, rep.DeclinedOut, rep.Out, rep.AnsweredIn, rep.In)
	for _, r := range rep.Failures {
		fmt.Fprintf(e.stdout, "\n[expected %s] %s: %s\n  citations %d, confidence %s (%.3f)\n  %s\n", r.Case.Expect, r.Case.Mode, r.Case.Question,
			r.Citations, r.Level, r.Score, strings.ReplaceAll(r.Response, "\n", "\n  "))
	}
	return nil
}

// openChatService opens the knowledge base and the chat service as serve
// wires them, for the evaluations that run chat turns; the caller closes
// the store.
func openChatService(ctx context.Context, cfg *config.Config, e env) (*backend, *chat.Service, error) {
	db, err := openKnowledge(ctx, cfg, e)
	if err != nil {
		return nil, nil, err
	}
	d, err := openDiagnoser(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	svc, err := newChatService(cfg, db, d, e.now, newLogger(e.stderr, cfg.LogLevel))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, svc, nil
}
