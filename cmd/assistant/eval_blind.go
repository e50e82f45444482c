package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/answereval"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/llm"
)

// blindOptions are the outputs `eval chat` writes for a blind set.
type blindOptions struct {
	answersOut, ratings, labels, packet string
	asJSON, failures                    bool
}

// answerRecord is one line of an answers file: a row of the blind set, the
// chat request it was run as and the full chat response, or the error of a
// turn that failed.
type answerRecord struct {
	answereval.Row
	Request  chatRequestRecord `json:"request"`
	Response *chat.Response    `json:"response,omitempty"`
	Error    string            `json:"error,omitempty"`
}

// chatRequestRecord is the request of a turn as POST /api/v1/chat takes it.
type chatRequestRecord struct {
	Message  string             `json:"message"`
	History  []chat.HistoryItem `json:"history,omitempty"`
	Mode     string             `json:"mode"`
	Vertical string             `json:"vertical,omitempty"`
}

// runBlindSet runs every row of a blind set as a chat turn, then measures
// the answers.
func runBlindSet(ctx context.Context, e env, cfg *config.Config, file string, opts blindOptions) error {
	rows, err := readBlindSet(file)
	if err != nil {
		return err
	}
	db, svc, err := openChatService(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer db.Close()
	records, err := runRowsTo(ctx, svc, rows, opts.answersOut)
	if err != nil {
		return err
	}
	return measure(ctx, e, db, file, records, opts)
}

// runRowsTo runs the rows, writing the answers to the file at path as
// they come (nowhere when path is empty).
func runRowsTo(ctx context.Context, svc *chat.Service, rows []answereval.Row, path string) ([]answerRecord, error) {
	if path == "" {
		return runRows(ctx, svc, rows, io.Discard)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	records, err := runRows(ctx, svc, rows, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing %s: %w", path, cerr)
	}
	return records, err
}

// readBlindSet reads and checks a blind set file, modes included.
func readBlindSet(file string) ([]answereval.Row, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := answereval.ReadSet(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, r := range rows {
		if !slices.Contains(chat.Modes, r.Mode) {
			return nil, assistant.Errorf(assistant.EInvalid, "%s: row %q: unknown mode %q; use one of %s", file, r.ID, r.Mode, strings.Join(chat.Modes, ", "))
		}
	}
	return rows, nil
}

// runRows runs the rows in order, each record written to out as soon as it
// is answered. A followup is asked with the history of the turn it
// follows, then that turn's message and answer. A turn that fails is
// recorded with its error (and so is a followup of it) and the run goes on.
func runRows(ctx context.Context, svc *chat.Service, rows []answereval.Row, out io.Writer) ([]answerRecord, error) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	byID := map[string]int{} // id -> position in records
	records := make([]answerRecord, 0, len(rows))
	for _, row := range rows {
		rec := answerRecord{Row: row, Request: chatRequestRecord{Message: row.Message, Mode: row.Mode, Vertical: row.Vertical}}
		var earlier *answerRecord
		if row.Kind == answereval.KindFollowup {
			earlier = &records[byID[row.Follows]]
			rec.Request.History = append(slices.Clone(earlier.Request.History),
				chat.HistoryItem{Role: llm.RoleUser, Content: earlier.Request.Message})
			if earlier.Response != nil {
				rec.Request.History = append(rec.Request.History, chat.HistoryItem{Role: llm.RoleAssistant, Content: earlier.Response.Response})
			}
		}
		switch {
		case earlier != nil && earlier.Response == nil:
			rec.Error = fmt.Sprintf("the turn it follows (%s) failed", row.Follows)
		default:
			resp, _, err := svc.Run(ctx, chat.Request{Message: rec.Request.Message, History: rec.Request.History,
				Mode: rec.Request.Mode, Vertical: rec.Request.Vertical, Source: "eval"}, nil)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				rec.Error = err.Error()
			} else {
				rec.Response = &resp
			}
		}
		if err := enc.Encode(rec); err != nil {
			return nil, fmt.Errorf("writing the answers: %w", err)
		}
		byID[row.ID] = len(records)
		records = append(records, rec)
	}
	return records, nil
}

// measureAnswersFile measures the answers of an earlier run.
func measureAnswersFile(ctx context.Context, e env, cfg *config.Config, file string, opts blindOptions) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	records, err := readAnswers(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	db, err := openKnowledge(ctx, cfg, e)
	if err != nil {
		return err
	}
	defer db.Close()
	return measure(ctx, e, db, file, records, opts)
}

// readAnswers reads an answers file: one answerRecord per line (or any
// sequence of JSON objects), each with an id used once, a known kind, and
// a response or an error.
func readAnswers(r io.Reader) ([]answerRecord, error) {
	dec := json.NewDecoder(r)
	var records []answerRecord
	ids := map[string]bool{}
	for n := 1; ; n++ {
		var rec answerRecord
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, assistant.Errorf(assistant.EInvalid, "answer %d: %v", n, err)
		}
		switch {
		case rec.ID == "" || ids[rec.ID]:
			return nil, assistant.Errorf(assistant.EInvalid, "answer %d: want a unique id, got %q", n, rec.ID)
		case !slices.Contains(answereval.Kinds, rec.Kind):
			return nil, assistant.Errorf(assistant.EInvalid, "answer %d (%s): kind %q: want one of %s", n, rec.ID, rec.Kind, strings.Join(answereval.Kinds, ", "))
		case rec.Response == nil && rec.Error == "":
			return nil, assistant.Errorf(assistant.EInvalid, "answer %d (%s): neither a response nor an error", n, rec.ID)
		}
		ids[rec.ID] = true
		records = append(records, rec)
	}
	if len(records) == 0 {
		return nil, assistant.Errorf(assistant.EInvalid, "no answers")
	}
	return records, nil
}

// failedTurn is a row whose turn failed; no figure counts it.
type failedTurn struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// blindReport is what `eval chat` prints for a blind set.
type blindReport struct {
	Set     string               `json:"set"`
	Figures answereval.Figures   `json:"figures"`
	Rated   *answereval.Rated    `json:"rated"`
	Labels  *answereval.Labelled `json:"labels"`
	Failed  []failedTurn         `json:"failed"`
}

// measure takes the figures of the answers and writes what opts asks for.
func measure(ctx context.Context, e env, db *backend, set string, records []answerRecord, opts blindOptions) error {
	rep := blindReport{Set: set, Failed: []failedTurn{}}
	var answers []answereval.Answer
	for _, rec := range records {
		if rec.Response == nil {
			rep.Failed = append(rep.Failed, failedTurn{ID: rec.ID, Error: rec.Error})
			continue
		}
		answers = append(answers, answereval.Answer{ID: rec.ID, Kind: rec.Kind, Mode: rec.Mode, Text: rec.Response.Response,
			RagHits: len(rec.Response.RagHits), Level: rec.Response.Confidence.Level, Score: rec.Response.Confidence.Score})
	}
	cards, err := resolveCards(ctx, db, records)
	if err != nil {
		return err
	}
	rep.Figures = answereval.Measure(answers, cards.text)
	if opts.ratings != "" {
		rated, err := figuresFromFile(opts.ratings, answereval.ReadRatings, func(r []answereval.Rating) (answereval.Rated, error) {
			return answereval.Rate(answers, r)
		})
		if err != nil {
			return err
		}
		rep.Rated = &rated
	}
	if opts.labels != "" {
		labelled, err := figuresFromFile(opts.labels, answereval.ReadLabels, func(l []answereval.Label) (answereval.Labelled, error) {
			return answereval.LabelFigures(answers, l)
		})
		if err != nil {
			return err
		}
		rep.Labels = &labelled
	}
	if opts.packet != "" {
		if err := writePacketFile(opts.packet, set, records, cards); err != nil {
			return err
		}
	}
	if opts.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	printBlindReport(e.stdout, rep, opts.failures)
	return nil
}

// cardSet holds the cards of the tokens the answers cite, as /resolve
// serves them: the JSON of each card by token; a token that does not
// resolve has none.
type cardSet struct {
	json map[string]json.RawMessage
	// texts are the cards' texts (answereval.CardTextFromJSON).
	texts map[string]string
}

// text is the answereval.CardText of the set.
func (c cardSet) text(token string) (string, bool) {
	t, ok := c.texts[token]
	return t, ok
}

// figuresFromFile reads the file at path with read and takes figures from
// what it holds; an error of either step names the file.
func figuresFromFile[T, F any](path string, read func(io.Reader) (T, error), figures func(T) (F, error)) (F, error) {
	var none F
	f, err := os.Open(path)
	if err != nil {
		return none, err
	}
	v, err := read(f)
	f.Close()
	if err != nil {
		return none, fmt.Errorf("%s: %w", path, err)
	}
	out, err := figures(v)
	if err != nil {
		return none, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

var citedToken = regexp.MustCompile(`\[([a-z]+):([a-z0-9_-]+)\]`)

// resolveCards asks the service's own POST /resolve, in process, for the
// cards of every token the answers cite, so the figures read what a
// reader's hover card shows.
func resolveCards(ctx context.Context, db *backend, records []answerRecord) (cardSet, error) {
	var tokens []map[string]string
	seen := map[string]bool{}
	for _, rec := range records {
		if rec.Response == nil {
			continue
		}
		for _, m := range citedToken.FindAllStringSubmatch(rec.Response.Response, -1) {
			if tok := m[1] + ":" + m[2]; !seen[tok] {
				seen[tok] = true
				tokens = append(tokens, map[string]string{"type": m[1], "slug": m[2]})
			}
		}
	}
	cards := cardSet{json: map[string]json.RawMessage{}, texts: map[string]string{}}
	d, err := openDiagnoser(ctx, db) // a card shows the catalog's applications, as serve's does
	if err != nil {
		return cards, err
	}
	srv := &api.Server{Knowledge: db.reader, Retriever: db.retriever, Citations: db, Ready: db, Catalog: d.Catalog(), Diagnosis: d,
		Logger: slog.New(slog.DiscardHandler), Now: time.Now, Version: version, Metrics: prometheus.NewRegistry()}
	h := srv.Handler()
	for start := 0; start < len(tokens); start += api.MaxResolveTokens {
		body, err := json.Marshal(map[string]any{"tokens": tokens[start:min(len(tokens), start+api.MaxResolveTokens)]})
		if err != nil {
			return cards, err
		}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, resolvePath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return cards, fmt.Errorf("resolving the cited tokens: %d %s", rec.Code, rec.Body)
		}
		var resolved struct {
			Resolved []json.RawMessage `json:"resolved"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resolved); err != nil {
			return cards, fmt.Errorf("resolving the cited tokens: %w", err)
		}
		for _, card := range resolved.Resolved {
			var id struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal(card, &id); err != nil {
				return cards, fmt.Errorf("resolving the cited tokens: %w", err)
			}
			text, err := answereval.CardTextFromJSON(card)
			if err != nil {
				return cards, fmt.Errorf("the card of %s: %w", id.Token, err)
			}
			cards.json[id.Token], cards.texts[id.Token] = card, text
		}
	}
	return cards, nil
}

// resolvePath is the path of POST /resolve.
const resolvePath = "/api/assistant/v1/resolve"
