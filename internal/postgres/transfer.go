package postgres

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Export and load: what `assistant migrate` uses to copy a deployment.

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// RowCounts implements assistant.Exporter.
func (s *DB) RowCounts(ctx context.Context) (assistant.RowCounts, error) {
	return rowCounts(ctx, s.pool)
}

func rowCounts(ctx context.Context, q queryRower) (assistant.RowCounts, error) {
	var c assistant.RowCounts
	err := q.QueryRow(ctx, `SELECT
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
	return collect(ctx, s, `SELECT id, created_at FROM workspaces ORDER BY id`, func(r pgx.Row) (assistant.Workspace, error) {
		var w assistant.Workspace
		err := r.Scan(&w.ID, &w.CreatedAt)
		w.CreatedAt = w.CreatedAt.UTC()
		return w, err
	})
}

// ExportUsers implements assistant.Exporter.
func (s *DB) ExportUsers(ctx context.Context) ([]assistant.User, error) {
	return collect(ctx, s, `SELECT id, workspace, email, password_hash, created_at FROM users ORDER BY id`, func(r pgx.Row) (assistant.User, error) {
		var u assistant.User
		err := r.Scan(&u.ID, &u.Workspace, &u.Email, &u.PasswordHash, &u.CreatedAt)
		u.CreatedAt = u.CreatedAt.UTC()
		return u, err
	})
}

// ExportKeys implements assistant.Exporter.
func (s *DB) ExportKeys(ctx context.Context) ([]assistant.APIKey, error) {
	return collect(ctx, s, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at, id`, scanKey)
}

// ExportAudit implements assistant.Exporter.
func (s *DB) ExportAudit(ctx context.Context) iter.Seq2[assistant.AuditEvent, error] {
	return each(ctx, s, `SELECT at, workspace, actor, action, target, ip, detail FROM audit_log ORDER BY id`, func(r pgx.Row) (assistant.AuditEvent, error) {
		var e assistant.AuditEvent
		err := r.Scan(&e.At, &e.Workspace, &e.Actor, &e.Action, &e.Target, &e.IP, &e.Detail)
		e.At = e.At.UTC()
		return e, err
	})
}

// ExportUsage implements assistant.Exporter.
func (s *DB) ExportUsage(ctx context.Context) iter.Seq2[assistant.UsageRecord, error] {
	return each(ctx, s, `SELECT at, workspace, key_id, endpoint, mode, source, status, latency_ms FROM usage ORDER BY id`, func(r pgx.Row) (assistant.UsageRecord, error) {
		var u assistant.UsageRecord
		var latency float64
		err := r.Scan(&u.At, &u.Workspace, &u.KeyID, &u.Endpoint, &u.Mode, &u.Source, &u.Status, &latency)
		u.At, u.Latency = u.At.UTC(), fromMillis(latency)
		return u, err
	})
}

// ExportCitations implements assistant.Exporter.
func (s *DB) ExportCitations(ctx context.Context) iter.Seq2[assistant.CitationEvent, error] {
	return each(ctx, s, `SELECT response_id, workspace, source, token, cited_at FROM citation_events ORDER BY id`, func(r pgx.Row) (assistant.CitationEvent, error) {
		var ev assistant.CitationEvent
		var tok string
		if err := r.Scan(&ev.ResponseID, &ev.Workspace, &ev.Source, &tok, &ev.At); err != nil {
			return ev, err
		}
		t, err := assistant.ParseToken(tok)
		ev.Token, ev.At = t, ev.At.UTC()
		return ev, err
	})
}

// ExportSetupToken implements assistant.Exporter.
func (s *DB) ExportSetupToken(ctx context.Context) (*assistant.SetupToken, error) {
	tokens, err := collect(ctx, s, `SELECT hash, expires_at FROM setup_tokens ORDER BY expires_at DESC LIMIT 1`, func(r pgx.Row) (assistant.SetupToken, error) {
		var t assistant.SetupToken
		var hash []byte
		err := r.Scan(&hash, &t.ExpiresAt)
		copy(t.Hash[:], hash)
		t.ExpiresAt = t.ExpiresAt.UTC()
		return t, err
	})
	if err != nil || len(tokens) == 0 {
		return nil, err
	}
	return &tokens[0], nil
}

// ExportReviewSettings implements assistant.Exporter.
func (s *DB) ExportReviewSettings(ctx context.Context) ([]assistant.WorkspaceReviewSetting, error) {
	return collect(ctx, s, `SELECT workspace, enabled, retention_days, updated_at FROM review_settings ORDER BY workspace`,
		func(r pgx.Row) (assistant.WorkspaceReviewSetting, error) {
			var w assistant.WorkspaceReviewSetting
			err := r.Scan(&w.Workspace, &w.Setting.Enabled, &w.Setting.RetentionDays, &w.UpdatedAt)
			w.UpdatedAt = w.UpdatedAt.UTC()
			return w, err
		})
}

// ExportReviews implements assistant.Exporter.
func (s *DB) ExportReviews(ctx context.Context) iter.Seq2[assistant.Review, error] {
	return each(ctx, s, `SELECT id, workspace, at, expires_at, key_id, surface, mode, level, message, history, answer,
		trace::text, knowledge::text, verdicts::text FROM reviews ORDER BY at, id`, func(row pgx.Row) (assistant.Review, error) {
		var r assistant.Review
		var trace, knowledge, verdicts string
		err := row.Scan(&r.ID, &r.Workspace, &r.At, &r.ExpiresAt, &r.KeyID, &r.Surface, &r.Mode, &r.Level, &r.Message, &r.History, &r.Answer, &trace, &knowledge, &verdicts)
		r.At, r.ExpiresAt = r.At.UTC(), r.ExpiresAt.UTC()
		r.Trace, r.Knowledge, r.Verdicts = []byte(trace), []byte(knowledge), []byte(verdicts)
		return r, err
	})
}

// LoadFrom implements assistant.Loader. The tables are locked against
// writes for the transaction, and the rows streamed in with COPY.
func (s *DB) LoadFrom(ctx context.Context, src assistant.Exporter) (written assistant.RowCounts, err error) {
	tx, err := s.beginKnowledgeWrite(ctx)
	if err != nil {
		return written, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE workspaces, users, api_keys, audit_log, usage, citation_events, setup_tokens, entities, review_settings, reviews IN EXCLUSIVE MODE`); err != nil {
		return written, err
	}
	held, err := rowCounts(ctx, tx)
	if err != nil {
		return written, err
	}
	if err := held.RequireEmptyTarget(); err != nil {
		return written, err
	}
	for _, q := range []string{`DELETE FROM entities`, `DELETE FROM setup_tokens`} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return written, err
		}
	}

	workspaces, err := src.ExportWorkspaces(ctx)
	if err != nil {
		return written, fmt.Errorf("reading workspaces: %w", err)
	}
	if written.Workspaces, err = copyRows(ctx, tx, "workspaces", []string{"id", "created_at"}, workspaces, func(w assistant.Workspace) []any {
		return []any{w.ID, ts(w.CreatedAt)}
	}); err != nil {
		return written, err
	}
	users, err := src.ExportUsers(ctx)
	if err != nil {
		return written, fmt.Errorf("reading users: %w", err)
	}
	if written.Users, err = copyRows(ctx, tx, "users", []string{"id", "workspace", "email", "password_hash", "created_at"}, users, func(u assistant.User) []any {
		return []any{u.ID, u.Workspace, u.Email, u.PasswordHash, ts(u.CreatedAt)}
	}); err != nil {
		return written, err
	}
	// The next user created gets the id after the copied ones.
	if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('users', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM users`); err != nil {
		return written, err
	}
	keys, err := src.ExportKeys(ctx)
	if err != nil {
		return written, fmt.Errorf("reading keys: %w", err)
	}
	if written.Keys, err = copyRows(ctx, tx, "api_keys", strings.Split(strings.ReplaceAll(keyColumns, " ", ""), ","), keys, keyArgs); err != nil {
		return written, err
	}
	if written.Audit, err = copyStream(ctx, tx, "audit log", "audit_log", []string{"at", "workspace", "actor", "action", "target", "ip", "detail"},
		src.ExportAudit(ctx), func(e assistant.AuditEvent) []any {
			return []any{ts(e.At), e.Workspace, e.Actor, e.Action, e.Target, e.IP, e.Detail}
		}); err != nil {
		return written, err
	}
	if written.Usage, err = copyStream(ctx, tx, "usage", "usage", []string{"at", "workspace", "key_id", "endpoint", "mode", "source", "status", "latency_ms"},
		src.ExportUsage(ctx), usageArgs); err != nil {
		return written, err
	}
	if written.Citations, err = copyStream(ctx, tx, "citation events", "citation_events", []string{"response_id", "workspace", "source", "token", "cited_at"},
		src.ExportCitations(ctx), func(ev assistant.CitationEvent) []any {
			return []any{ev.ResponseID, ev.Workspace, ev.Source, ev.Token.String(), ts(ev.At)}
		}); err != nil {
		return written, err
	}
	tok, err := src.ExportSetupToken(ctx)
	if err != nil {
		return written, fmt.Errorf("reading the setup token: %w", err)
	}
	if tok != nil {
		if _, err := tx.Exec(ctx, `INSERT INTO setup_tokens (hash, expires_at) VALUES ($1, $2)`, tok.Hash[:], ts(tok.ExpiresAt)); err != nil {
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
	if err := s.writeRows(ctx, tx, rows); err != nil {
		return written, err
	}
	settings, err := src.ExportReviewSettings(ctx)
	if err != nil {
		return written, fmt.Errorf("reading review settings: %w", err)
	}
	if written.ReviewSettings, err = copyRows(ctx, tx, "review_settings", []string{"workspace", "enabled", "retention_days", "updated_at"}, settings,
		func(w assistant.WorkspaceReviewSetting) []any {
			return []any{w.Workspace, w.Setting.Enabled, w.Setting.RetentionDays, ts(w.UpdatedAt)}
		}); err != nil {
		return written, err
	}
	if written.Reviews, err = copyStream(ctx, tx, "review turns", "reviews",
		[]string{"id", "workspace", "at", "expires_at", "key_id", "surface", "mode", "level", "message", "history", "answer", "trace", "knowledge", "verdicts"},
		src.ExportReviews(ctx), func(r assistant.Review) []any {
			trace, knowledge, verdicts := r.JSONColumns()
			return []any{r.ID, r.Workspace, ts(r.At), ts(r.ExpiresAt), r.KeyID, r.Surface, r.Mode, r.Level, r.Message, r.History, r.Answer,
				trace, knowledge, verdicts}
		}); err != nil {
		return written, err
	}
	return written, tx.Commit(ctx)
}

// copyRows writes rows to table with COPY.
func copyRows[T any](ctx context.Context, tx pgx.Tx, table string, columns []string, rows []T, args func(T) []any) (int64, error) {
	return tx.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		return args(rows[i]), nil
	}))
}

// copyStream writes the rows seq yields to table with one COPY, reading
// them as it goes.
func copyStream[T any](ctx context.Context, tx pgx.Tx, what, table string, columns []string, seq iter.Seq2[T, error], args func(T) []any) (int64, error) {
	next, stop := iter.Pull2(seq)
	defer stop()
	var readErr error
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
		v, err, ok := next()
		switch {
		case !ok:
			return nil, nil
		case err != nil:
			readErr = fmt.Errorf("reading the %s: %w", what, err)
			return nil, readErr
		}
		return args(v), nil
	}))
	if readErr != nil {
		return n, readErr
	}
	return n, err
}

// collect runs a query and scans every row with scan.
func collect[T any](ctx context.Context, s *DB, query string, scan func(pgx.Row) (T, error)) ([]T, error) {
	var out []T
	for v, err := range each(ctx, s, query, scan) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// each runs a query and yields its rows scanned with scan, one at a time;
// the rows are closed when the caller stops.
func each[T any](ctx context.Context, s *DB, query string, scan func(pgx.Row) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		rows, err := s.pool.Query(ctx, query)
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
