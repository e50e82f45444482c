package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"iter"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Export and load: what `assistant migrate` uses to copy a deployment.

// RowCounts implements assistant.Exporter.
func (s *DB) RowCounts(ctx context.Context) (assistant.RowCounts, error) {
	return rowCounts(ctx, s.db)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func rowCounts(ctx context.Context, q queryer) (assistant.RowCounts, error) {
	var c assistant.RowCounts
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM workspaces), (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM api_keys),
		(SELECT COUNT(*) FROM audit_log), (SELECT COUNT(*) FROM usage), (SELECT COUNT(*) FROM citation_events),
		(SELECT COUNT(*) FROM setup_tokens), (SELECT COUNT(*) FROM entities),
		(SELECT COUNT(*) FROM entities WHERE origin = 'imported'),
		(SELECT COUNT(*) FROM review_settings), (SELECT COUNT(*) FROM reviews)`).
		Scan(&c.Workspaces, &c.Users, &c.Keys, &c.Audit, &c.Usage, &c.Citations, &c.SetupTokens, &c.Entities, &c.ImportedEntities,
			&c.ReviewSettings, &c.Reviews)
	return c, err
}

// ExportWorkspaces implements assistant.Exporter.
func (s *DB) ExportWorkspaces(ctx context.Context) ([]assistant.Workspace, error) {
	return collect(ctx, s.db, `SELECT id, created_at FROM workspaces ORDER BY id`, func(sc scanner) (assistant.Workspace, error) {
		var w assistant.Workspace
		var created int64
		err := sc.Scan(&w.ID, &created)
		w.CreatedAt = fromMS(created)
		return w, err
	})
}

// ExportUsers implements assistant.Exporter.
func (s *DB) ExportUsers(ctx context.Context) ([]assistant.User, error) {
	return collect(ctx, s.db, `SELECT id, workspace, email, password_hash, created_at FROM users ORDER BY id`, func(sc scanner) (assistant.User, error) {
		var u assistant.User
		var created int64
		err := sc.Scan(&u.ID, &u.Workspace, &u.Email, &u.PasswordHash, &created)
		u.CreatedAt = fromMS(created)
		return u, err
	})
}

// ExportKeys implements assistant.Exporter.
func (s *DB) ExportKeys(ctx context.Context) ([]assistant.APIKey, error) {
	return collect(ctx, s.db, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at, id`, func(sc scanner) (assistant.APIKey, error) {
		return scanKey(sc)
	})
}

// ExportAudit implements assistant.Exporter.
func (s *DB) ExportAudit(ctx context.Context) iter.Seq2[assistant.AuditEvent, error] {
	return each(ctx, s.db, `SELECT at, workspace, actor, action, target, ip, detail FROM audit_log ORDER BY id`, func(sc scanner) (assistant.AuditEvent, error) {
		var e assistant.AuditEvent
		var at int64
		err := sc.Scan(&at, &e.Workspace, &e.Actor, &e.Action, &e.Target, &e.IP, &e.Detail)
		e.At = fromMS(at)
		return e, err
	})
}

// ExportUsage implements assistant.Exporter.
func (s *DB) ExportUsage(ctx context.Context) iter.Seq2[assistant.UsageRecord, error] {
	return each(ctx, s.db, `SELECT at, workspace, key_id, endpoint, mode, source, status, latency_ms FROM usage ORDER BY id`, func(sc scanner) (assistant.UsageRecord, error) {
		var u assistant.UsageRecord
		var at int64
		var latency float64
		err := sc.Scan(&at, &u.Workspace, &u.KeyID, &u.Endpoint, &u.Mode, &u.Source, &u.Status, &latency)
		u.At, u.Latency = fromMS(at), fromMillis(latency)
		return u, err
	})
}

// ExportCitations implements assistant.Exporter.
func (s *DB) ExportCitations(ctx context.Context) iter.Seq2[assistant.CitationEvent, error] {
	return each(ctx, s.db, `SELECT response_id, workspace, source, token, cited_at FROM citation_events ORDER BY id`, func(sc scanner) (assistant.CitationEvent, error) {
		var ev assistant.CitationEvent
		var tok string
		var at int64
		if err := sc.Scan(&ev.ResponseID, &ev.Workspace, &ev.Source, &tok, &at); err != nil {
			return ev, err
		}
		t, err := assistant.ParseToken(tok)
		ev.Token, ev.At = t, fromMS(at)
		return ev, err
	})
}

// ExportSetupToken implements assistant.Exporter.
func (s *DB) ExportSetupToken(ctx context.Context) (*assistant.SetupToken, error) {
	tokens, err := collect(ctx, s.db, `SELECT hash, expires_at FROM setup_tokens ORDER BY expires_at DESC LIMIT 1`, func(sc scanner) (assistant.SetupToken, error) {
		var t assistant.SetupToken
		var hash []byte
		var expires int64
		err := sc.Scan(&hash, &expires)
		copy(t.Hash[:], hash)
		t.ExpiresAt = fromMS(expires)
		return t, err
	})
	if err != nil || len(tokens) == 0 {
		return nil, err
	}
	return &tokens[0], nil
}

// ExportReviewSettings implements assistant.Exporter.
func (s *DB) ExportReviewSettings(ctx context.Context) ([]assistant.WorkspaceReviewSetting, error) {
	return collect(ctx, s.db, `SELECT workspace, enabled, retention_days, updated_at FROM review_settings ORDER BY workspace`,
		func(sc scanner) (assistant.WorkspaceReviewSetting, error) {
			var w assistant.WorkspaceReviewSetting
			var updated int64
			err := sc.Scan(&w.Workspace, &w.Setting.Enabled, &w.Setting.RetentionDays, &updated)
			w.UpdatedAt = fromMS(updated)
			return w, err
		})
}

// ExportReviews implements assistant.Exporter.
func (s *DB) ExportReviews(ctx context.Context) iter.Seq2[assistant.Review, error] {
	return each(ctx, s.db, `SELECT id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer, trace, knowledge, verdicts
		FROM reviews ORDER BY at, id`, func(sc scanner) (assistant.Review, error) {
		var r assistant.Review
		var at, exp int64
		var trace, knowledge, verdicts string
		err := sc.Scan(&r.ID, &r.Workspace, &at, &exp, &r.KeyID, &r.Surface, &r.Mode, &r.Level, &r.Message, &r.History, &r.Answer, &trace, &knowledge, &verdicts)
		r.At, r.ExpiresAt = fromMS(at), fromMS(exp)
		r.Trace, r.Knowledge, r.Verdicts = []byte(trace), []byte(knowledge), []byte(verdicts)
		return r, err
	})
}

// LoadFrom implements assistant.Loader.
func (s *DB) LoadFrom(ctx context.Context, src assistant.Exporter) (written assistant.RowCounts, err error) {
	defer s.settings.forget() // it writes review settings
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return written, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	held, err := rowCounts(ctx, tx)
	if err != nil {
		return written, err
	}
	if err := held.RequireEmptyTarget(); err != nil {
		return written, err
	}
	for _, q := range []string{`DELETE FROM entities`, `DELETE FROM setup_tokens`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return written, err
		}
	}

	workspaces, err := src.ExportWorkspaces(ctx)
	if err != nil {
		return written, fmt.Errorf("reading workspaces: %w", err)
	}
	for _, w := range workspaces {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, created_at) VALUES (?, ?)`, w.ID, ms(w.CreatedAt)); err != nil {
			return written, err
		}
		written.Workspaces++
	}
	users, err := src.ExportUsers(ctx)
	if err != nil {
		return written, fmt.Errorf("reading users: %w", err)
	}
	for _, u := range users {
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, workspace, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
			u.ID, u.Workspace, u.Email, u.PasswordHash, ms(u.CreatedAt)); err != nil {
			return written, err
		}
		written.Users++
	}
	keys, err := src.ExportKeys(ctx)
	if err != nil {
		return written, fmt.Errorf("reading keys: %w", err)
	}
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, insertKeySQL, keyArgs(k)...); err != nil {
			return written, err
		}
		written.Keys++
	}
	for e, err := range src.ExportAudit(ctx) {
		if err != nil {
			return written, fmt.Errorf("reading the audit log: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, workspace, actor, action, target, ip, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ms(e.At), e.Workspace, e.Actor, e.Action, e.Target, e.IP, e.Detail); err != nil {
			return written, err
		}
		written.Audit++
	}
	for u, err := range src.ExportUsage(ctx) {
		if err != nil {
			return written, fmt.Errorf("reading usage: %w", err)
		}
		if err := insertUsage(ctx, tx, u); err != nil {
			return written, err
		}
		written.Usage++
	}
	for ev, err := range src.ExportCitations(ctx) {
		if err != nil {
			return written, fmt.Errorf("reading citation events: %w", err)
		}
		res, err := tx.ExecContext(ctx, insertRows(insertCitationPrefix, citationRow, 1, insertCitationSuffix), ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ev.At.UnixMilli())
		if err != nil {
			return written, err
		}
		n, _ := res.RowsAffected()
		written.Citations += n
	}
	tok, err := src.ExportSetupToken(ctx)
	if err != nil {
		return written, fmt.Errorf("reading the setup token: %w", err)
	}
	if tok != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO setup_tokens (hash, expires_at) VALUES (?, ?)`, tok.Hash[:], ms(tok.ExpiresAt)); err != nil {
			return written, err
		}
		written.SetupTokens++
	}
	entities, err := src.AllEntities(ctx)
	if err != nil {
		return written, fmt.Errorf("reading entities: %w", err)
	}
	rows := make([]entityRow, len(entities))
	for i, e := range entities {
		rows[i] = toRow(e)
		written.Entities++
		if e.Origin == assistant.OriginImported {
			written.ImportedEntities++
		}
	}
	if err := s.replaceRows(ctx, tx, nil, rows); err != nil {
		return written, err
	}
	settings, err := src.ExportReviewSettings(ctx)
	if err != nil {
		return written, fmt.Errorf("reading review settings: %w", err)
	}
	for _, w := range settings {
		if _, err := tx.ExecContext(ctx, `INSERT INTO review_settings (workspace, enabled, retention_days, updated_at) VALUES (?, ?, ?, ?)`,
			w.Workspace, w.Setting.Enabled, w.Setting.RetentionDays, ms(w.UpdatedAt)); err != nil {
			return written, err
		}
		written.ReviewSettings++
	}
	for r, err := range src.ExportReviews(ctx) {
		if err != nil {
			return written, fmt.Errorf("reading review turns: %w", err)
		}
		trace, knowledge, verdicts := r.JSONColumns()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reviews (id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer, trace, knowledge, verdicts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Workspace, ms(r.At), ms(r.ExpiresAt), r.KeyID, r.Surface, r.Mode, r.Level, r.Message, r.History, r.Answer,
			trace, knowledge, verdicts); err != nil {
			return written, err
		}
		written.Reviews++
	}
	return written, tx.Commit()
}

type scanner interface{ Scan(...any) error }

// collect runs a query and scans every row with scan.
func collect[T any](ctx context.Context, db *sql.DB, query string, scan func(scanner) (T, error)) ([]T, error) {
	var out []T
	for v, err := range each(ctx, db, query, scan) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// each runs a query and yields its rows scanned with scan, one at a time;
// the rows are closed when the caller stops.
func each[T any](ctx context.Context, db *sql.DB, query string, scan func(scanner) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			yield(zero, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if !yield(v, err) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(zero, err)
		}
	}
}
