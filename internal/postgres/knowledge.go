package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
)

// entityRow is the stored form of an entity: list fields as text arrays.
type entityRow struct {
	Token, Type, Slug, Title  string
	Authors                   []string
	Year                      *int
	URL                       *string
	URLNote                   string
	Tags, Archetypes, Related []string
	Summary                   string
	KeyIdeas, WhenToUse       []string
	Pitfalls                  []string
	Origin, Hash              string
}

const entityColumns = `token, type, slug, title, authors, year, url, url_note, tags, archetypes,
	related, summary, key_ideas, when_to_use, pitfalls, origin, content_hash`

func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func toRow(e assistant.Entity) entityRow {
	related := make([]string, len(e.Related))
	for i, t := range e.Related {
		related[i] = t.String()
	}
	r := entityRow{
		Token: e.Token().String(), Type: string(e.Type), Slug: e.Slug, Title: e.Title, Authors: list(e.Authors),
		Year: e.Year, URLNote: e.URLNote, Tags: list(e.Tags), Archetypes: list(e.Archetypes), Related: related,
		Summary: e.Summary, KeyIdeas: list(e.KeyIdeas), WhenToUse: list(e.WhenToUse), Pitfalls: list(e.Pitfalls),
		Origin: e.Origin,
	}
	if e.URL != "" {
		r.URL = &e.URL
	}
	// The content hash covers every field but the origin: a sync rewrites
	// only the entities whose content (or origin) changed.
	b, _ := json.Marshal([]any{r.Type, r.Slug, r.Title, r.Authors, r.Year, r.URL, r.URLNote, r.Tags, r.Archetypes,
		r.Related, r.Summary, r.KeyIdeas, r.WhenToUse, r.Pitfalls})
	sum := sha256.Sum256(b)
	r.Hash = hex.EncodeToString(sum[:])
	return r
}

func (r *entityRow) args(now time.Time) []any {
	return []any{r.Token, r.Type, r.Slug, r.Title, r.Authors, r.Year, r.URL, r.URLNote, r.Tags, r.Archetypes,
		r.Related, r.Summary, r.KeyIdeas, r.WhenToUse, r.Pitfalls, r.Origin, r.Hash, now}
}

func scanEntity(sc pgx.Row) (assistant.Entity, error) {
	var r entityRow
	if err := sc.Scan(&r.Token, &r.Type, &r.Slug, &r.Title, &r.Authors, &r.Year, &r.URL, &r.URLNote,
		&r.Tags, &r.Archetypes, &r.Related, &r.Summary, &r.KeyIdeas, &r.WhenToUse, &r.Pitfalls,
		&r.Origin, &r.Hash); err != nil {
		return assistant.Entity{}, err
	}
	e := assistant.Entity{
		Type: assistant.EntityType(r.Type), Slug: r.Slug, Title: r.Title, Authors: r.Authors, Year: r.Year,
		URLNote: r.URLNote, Tags: r.Tags, Archetypes: r.Archetypes, Summary: r.Summary, KeyIdeas: r.KeyIdeas,
		WhenToUse: r.WhenToUse, Pitfalls: r.Pitfalls, Origin: r.Origin,
	}
	if r.URL != nil {
		e.URL = *r.URL
	}
	for _, s := range r.Related {
		if t, err := assistant.ParseToken(s); err == nil {
			e.Related = append(e.Related, t)
		}
	}
	return e, nil
}

// upsertEntity writes one entity row, replacing the row with its token.
const upsertEntity = `INSERT INTO entities (` + entityColumns + `, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
	ON CONFLICT (token) DO UPDATE SET type = EXCLUDED.type, slug = EXCLUDED.slug, title = EXCLUDED.title,
		authors = EXCLUDED.authors, year = EXCLUDED.year, url = EXCLUDED.url, url_note = EXCLUDED.url_note,
		tags = EXCLUDED.tags, archetypes = EXCLUDED.archetypes, related = EXCLUDED.related,
		summary = EXCLUDED.summary, key_ideas = EXCLUDED.key_ideas, when_to_use = EXCLUDED.when_to_use,
		pitfalls = EXCLUDED.pitfalls, origin = EXCLUDED.origin, content_hash = EXCLUDED.content_hash,
		updated_at = EXCLUDED.updated_at`

type storedEntity struct{ origin, hash string }

// beginKnowledgeWrite starts a transaction that holds the knowledge lock
// until it ends: syncs and imports of several instances (all starting at
// once, say) run one after the other, each seeing what the previous wrote.
func (s *DB) beginKnowledgeWrite(ctx context.Context) (pgx.Tx, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.knowledgeLock); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// storedEntities returns the origin and content hash of the stored
// entities, all of them or those with the listed tokens.
func storedEntities(ctx context.Context, tx pgx.Tx, tokens []string) (map[string]storedEntity, error) {
	q, args := `SELECT token, origin, content_hash FROM entities`, []any{}
	if tokens != nil {
		q, args = q+` WHERE token = ANY($1)`, []any{tokens}
	}
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]storedEntity{}
	for rows.Next() {
		var tok string
		var st storedEntity
		if err := rows.Scan(&tok, &st.origin, &st.hash); err != nil {
			return nil, err
		}
		out[tok] = st
	}
	return out, rows.Err()
}

// SyncEntities implements assistant.KnowledgeStore.
func (s *DB) SyncEntities(ctx context.Context, origin string, entities []assistant.Entity) (res assistant.SyncResult, err error) {
	if origin != assistant.OriginEmbedded && origin != assistant.OriginImported {
		return res, assistant.Errorf(assistant.EInvalid, "unknown entity origin %q", origin)
	}
	tx, err := s.beginKnowledgeWrite(ctx)
	if err != nil {
		return res, err
	}
	defer tx.Rollback(ctx)
	existing, err := storedEntities(ctx, tx, nil)
	if err != nil {
		return res, err
	}
	var writes []entityRow
	var gone []string
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
		default:
			res.Inserted++
		}
		writes = append(writes, r)
	}
	for tok, old := range existing {
		if old.origin == origin && !listed[tok] {
			gone = append(gone, tok)
			res.Deleted++
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM entities WHERE token = ANY($1)`, gone); err != nil {
			return res, err
		}
	}
	if err := s.writeRows(ctx, tx, writes); err != nil {
		return res, err
	}
	return res, tx.Commit(ctx)
}

// ImportEntities implements assistant.KnowledgeImporter.
func (s *DB) ImportEntities(ctx context.Context, entities []assistant.Entity) (res assistant.SyncResult, err error) {
	tokens := make([]string, len(entities))
	for i, e := range entities {
		tok := e.Token()
		if !tok.Valid() {
			return res, assistant.Errorf(assistant.EInvalid, "%q is not a valid citation token", tok)
		}
		tokens[i] = tok.String()
	}
	tx, err := s.beginKnowledgeWrite(ctx)
	if err != nil {
		return res, err
	}
	defer tx.Rollback(ctx)
	existing, err := storedEntities(ctx, tx, tokens)
	if err != nil {
		return res, err
	}
	var writes []entityRow
	for _, e := range entities {
		e.Origin = assistant.OriginImported
		r := toRow(e)
		switch old, ok := existing[r.Token]; {
		case !ok:
			res.Inserted++
		case old.origin == r.Origin && old.hash == r.Hash:
			res.Unchanged++
			continue
		default:
			res.Updated++
		}
		writes = append(writes, r)
	}
	if err := s.writeRows(ctx, tx, writes); err != nil {
		return res, err
	}
	return res, tx.Commit(ctx)
}

// writeRows inserts or replaces the rows in one round trip.
func (s *DB) writeRows(ctx context.Context, tx pgx.Tx, rows []entityRow) error {
	if len(rows) == 0 {
		return nil
	}
	now := ts(s.now())
	b := &pgx.Batch{}
	for i := range rows {
		b.Queue(upsertEntity, rows[i].args(now)...)
	}
	br := tx.SendBatch(ctx, b)
	for i := range rows {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("writing %s: %w", rows[i].Token, err)
		}
	}
	return br.Close()
}

// Entities implements assistant.KnowledgeStore.
func (s *DB) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	out := make(map[assistant.Token]assistant.Entity, len(tokens))
	if len(tokens) == 0 {
		return out, nil
	}
	list := make([]string, len(tokens))
	for i, t := range tokens {
		list[i] = t.String()
	}
	rows, err := s.pool.Query(ctx, `SELECT `+entityColumns+` FROM entities WHERE token = ANY($1)`, list)
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
	rows, err := s.pool.Query(ctx, `SELECT `+entityColumns+` FROM entities ORDER BY token`)
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
	err := s.pool.QueryRow(ctx, `SELECT
		COUNT(*),
		COUNT(*) FILTER (WHERE type = 'framework'),
		COUNT(*) FILTER (WHERE type = 'paper'),
		COUNT(*) FILTER (WHERE type = 'blog')
		FROM entities`).Scan(&st.Total, &st.Frameworks, &st.Papers, &st.Blogs)
	return st, err
}

// KnowledgeVersion implements assistant.KnowledgeStore: statement triggers
// on the entities table bump the counter in the same transaction as the
// change (migrations/00003_knowledge_version.sql).
func (s *DB) KnowledgeVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM knowledge_version WHERE id = 1`).Scan(&v)
	return v, err
}
