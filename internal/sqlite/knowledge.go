package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// entityRow is the stored form of an entity: list fields as JSON text.
type entityRow struct {
	Token, Type, Slug, Title, Authors string
	Year                              sql.NullInt64
	URL                               sql.NullString
	URLNote, Tags, Archetypes         string
	Related, Summary, KeyIdeas        string
	WhenToUse, Pitfalls, Origin, Hash string
}

const entityColumns = `token, type, slug, title, authors, year, url, url_note, tags, archetypes,
	related, summary, key_ideas, when_to_use, pitfalls, origin, content_hash`

func toRow(e assistant.Entity) entityRow {
	related := make([]string, len(e.Related))
	for i, t := range e.Related {
		related[i] = t.String()
	}
	r := entityRow{
		Token: e.Token().String(), Type: string(e.Type), Slug: e.Slug, Title: e.Title,
		Authors: jsonList(e.Authors), URLNote: e.URLNote, Tags: jsonList(e.Tags),
		Archetypes: jsonList(e.Archetypes), Related: jsonList(related), Summary: e.Summary,
		KeyIdeas: jsonList(e.KeyIdeas), WhenToUse: jsonList(e.WhenToUse),
		Pitfalls: jsonList(e.Pitfalls), Origin: e.Origin,
	}
	if e.Year != nil {
		r.Year = sql.NullInt64{Int64: int64(*e.Year), Valid: true}
	}
	if e.URL != "" {
		r.URL = sql.NullString{String: e.URL, Valid: true}
	}
	h := sha256.New()
	for _, f := range []string{r.Type, r.Slug, r.Title, r.Authors, fmt.Sprint(r.Year), r.URL.String, r.URLNote,
		r.Tags, r.Archetypes, r.Related, r.Summary, r.KeyIdeas, r.WhenToUse, r.Pitfalls} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	r.Hash = hex.EncodeToString(h.Sum(nil))
	return r
}

func (r entityRow) entity() (assistant.Entity, error) {
	e := assistant.Entity{
		Type: assistant.EntityType(r.Type), Slug: r.Slug, Title: r.Title, URL: r.URL.String,
		URLNote: r.URLNote, Summary: r.Summary, Origin: r.Origin,
	}
	if r.Year.Valid {
		y := int(r.Year.Int64)
		e.Year = &y
	}
	var related []string
	for _, f := range []struct {
		text string
		dst  *[]string
	}{{r.Authors, &e.Authors}, {r.Tags, &e.Tags}, {r.Archetypes, &e.Archetypes}, {r.Related, &related},
		{r.KeyIdeas, &e.KeyIdeas}, {r.WhenToUse, &e.WhenToUse}, {r.Pitfalls, &e.Pitfalls}} {
		if err := json.Unmarshal([]byte(f.text), f.dst); err != nil {
			return e, fmt.Errorf("entity %s: %w", r.Token, err)
		}
	}
	for _, s := range related {
		if t, err := assistant.ParseToken(s); err == nil {
			e.Related = append(e.Related, t)
		}
	}
	return e, nil
}

func scanEntity(sc interface{ Scan(...any) error }) (assistant.Entity, error) {
	var r entityRow
	if err := sc.Scan(&r.Token, &r.Type, &r.Slug, &r.Title, &r.Authors, &r.Year, &r.URL, &r.URLNote,
		&r.Tags, &r.Archetypes, &r.Related, &r.Summary, &r.KeyIdeas, &r.WhenToUse, &r.Pitfalls,
		&r.Origin, &r.Hash); err != nil {
		return assistant.Entity{}, err
	}
	return r.entity()
}

func jsonList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, _ := json.Marshal(list)
	return string(b)
}

// SyncEntities implements assistant.KnowledgeStore.
func (s *DB) SyncEntities(ctx context.Context, origin string, entities []assistant.Entity) (res assistant.SyncResult, err error) {
	if origin != assistant.OriginEmbedded && origin != assistant.OriginImported {
		return res, assistant.Errorf(assistant.EInvalid, "unknown entity origin %q", origin)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()

	type stored struct{ origin, hash string }
	existing := map[string]stored{}
	rows, err := tx.QueryContext(ctx, `SELECT token, origin, content_hash FROM entities`)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var tok string
		var st stored
		if err := rows.Scan(&tok, &st.origin, &st.hash); err != nil {
			rows.Close()
			return res, err
		}
		existing[tok] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}

	var writes []entityRow
	var stale []string // tokens whose stored rows go: rewritten or no longer listed
	listed := map[string]bool{}
	for _, e := range entities {
		e.Origin = origin
		r := toRow(e)
		listed[r.Token] = true
		old, ok := existing[r.Token]
		switch {
		case ok && old.origin == assistant.OriginImported && origin == assistant.OriginEmbedded:
			res.Unchanged++ // an imported entity wins over the embedded one
			continue
		case ok && old.hash == r.Hash && old.origin == origin:
			res.Unchanged++
			continue
		case ok:
			res.Updated++
			stale = append(stale, r.Token)
		default:
			res.Inserted++
		}
		writes = append(writes, r)
	}
	for tok, old := range existing {
		if old.origin == origin && !listed[tok] {
			stale = append(stale, tok)
			res.Deleted++
		}
	}
	if err := s.replaceRows(ctx, tx, stale, writes); err != nil {
		return res, err
	}
	return res, tx.Commit()
}

// ImportEntities implements assistant.KnowledgeImporter.
func (s *DB) ImportEntities(ctx context.Context, entities []assistant.Entity) (res assistant.SyncResult, err error) {
	for _, e := range entities {
		if tok := e.Token(); !tok.Valid() {
			return res, assistant.Errorf(assistant.EInvalid, "%q is not a valid citation token", tok)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var writes []entityRow
	var stale []string
	for _, e := range entities {
		e.Origin = assistant.OriginImported
		r := toRow(e)
		var origin, hash string
		switch err := tx.QueryRowContext(ctx, `SELECT origin, content_hash FROM entities WHERE token = ?`, r.Token).Scan(&origin, &hash); {
		case errors.Is(err, sql.ErrNoRows):
			res.Inserted++
		case err != nil:
			return res, err
		case origin == r.Origin && hash == r.Hash:
			res.Unchanged++
			continue
		default:
			res.Updated++
			stale = append(stale, r.Token)
		}
		writes = append(writes, r)
	}
	if err := s.replaceRows(ctx, tx, stale, writes); err != nil {
		return res, err
	}
	return res, tx.Commit()
}

// replaceRows deletes the entities with the stale tokens, in one
// statement, then inserts the rows.
func (s *DB) replaceRows(ctx context.Context, tx *sql.Tx, stale []string, rows []entityRow) error {
	if len(stale) > 0 {
		list := jsonList(stale)
		if _, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE token IN (SELECT value FROM json_each(?))`, list); err != nil {
			return err
		}
	}
	now := s.now().UTC().Format(time.RFC3339)
	insertRow, err := tx.PrepareContext(ctx, `INSERT INTO entities (`+entityColumns+`, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insertRow.Close()
	for _, r := range rows {
		if _, err := insertRow.ExecContext(ctx, r.Token, r.Type, r.Slug, r.Title, r.Authors, r.Year, r.URL, r.URLNote,
			r.Tags, r.Archetypes, r.Related, r.Summary, r.KeyIdeas, r.WhenToUse, r.Pitfalls, r.Origin, r.Hash, now); err != nil {
			return fmt.Errorf("writing %s: %w", r.Token, err)
		}
	}
	return nil
}

// Entities implements assistant.KnowledgeStore.
func (s *DB) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	out := make(map[assistant.Token]assistant.Entity, len(tokens))
	if len(tokens) == 0 {
		return out, nil
	}
	args := make([]any, len(tokens))
	for i, t := range tokens {
		args[i] = t.String()
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+entityColumns+` FROM entities
		WHERE token IN (`+placeholders(len(tokens))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntity(rows)
		if err != nil {
			return nil, err
		}
		out[e.Token()] = e
	}
	return out, rows.Err()
}

// AllEntities implements assistant.KnowledgeStore.
func (s *DB) AllEntities(ctx context.Context) ([]assistant.Entity, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+entityColumns+` FROM entities ORDER BY token`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.Entity
	for rows.Next() {
		e, err := scanEntity(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// KnowledgeStats implements assistant.KnowledgeStore.
func (s *DB) KnowledgeStats(ctx context.Context) (assistant.KnowledgeStats, error) {
	var st assistant.KnowledgeStats
	err := s.db.QueryRowContext(ctx, `SELECT
		COUNT(*),
		COUNT(*) FILTER (WHERE type = 'framework'),
		COUNT(*) FILTER (WHERE type = 'paper'),
		COUNT(*) FILTER (WHERE type = 'blog')
		FROM entities`).Scan(&st.Total, &st.Frameworks, &st.Papers, &st.Blogs)
	return st, err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// KnowledgeVersion implements assistant.KnowledgeStore: triggers on the
// entities table bump the counter in the same transaction as the change.
func (s *DB) KnowledgeVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, `SELECT version FROM knowledge_version WHERE id = 1`).Scan(&v)
	return v, err
}
