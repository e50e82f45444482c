package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The webhook store: endpoints, the outbox of events, deliveries and
// asynchronous turns (assistant.WebhookStore). SQLite has one writer at a
// time (transactions begin IMMEDIATE), so a claim is a plain UPDATE: no
// two claims ever see the same due row.

var _ assistant.WebhookStore = (*DB)(nil)

type txQueryer interface {
	execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// enqueueEvent writes e and one pending delivery per enabled endpoint of
// its workspace that listens to its type, in the caller's transaction.
func enqueueEvent(ctx context.Context, tx txQueryer, e assistant.WebhookEvent) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, event_types FROM webhook_endpoints WHERE workspace = ? AND enabled = 1`, e.Workspace)
	if err != nil {
		return 0, err
	}
	var targets []string
	for rows.Next() {
		var id, types string
		if err := rows.Scan(&id, &types); err != nil {
			rows.Close()
			return 0, err
		}
		ep := assistant.WebhookEndpoint{}
		json.Unmarshal([]byte(types), &ep.EventTypes)
		if ep.Wants(e.Type) {
			targets = append(targets, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(targets) == 0 {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, workspace, type, at, data) VALUES (?, ?, ?, ?, ?)`,
		e.ID, e.Workspace, e.Type, ms(e.At), string(e.Data)); err != nil {
		return 0, err
	}
	for _, id := range targets {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (event_id, endpoint_id, workspace, event_type, status, next_attempt_at, created_at)
			VALUES (?, ?, ?, ?, 'pending', ?, ?)`, e.ID, id, e.Workspace, e.Type, ms(e.At), ms(e.At)); err != nil {
			return 0, err
		}
	}
	return len(targets), nil
}

// EnqueueEvent implements assistant.WebhookStore.
func (s *DB) EnqueueEvent(ctx context.Context, e assistant.WebhookEvent) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n, err := enqueueEvent(ctx, tx, e)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

const endpointColumns = `id, workspace, url, event_types, secret, enabled, created_at, created_by`

func scanEndpoint(sc interface{ Scan(...any) error }) (assistant.WebhookEndpoint, error) {
	var e assistant.WebhookEndpoint
	var types string
	var created int64
	if err := sc.Scan(&e.ID, &e.Workspace, &e.URL, &types, &e.Secret, &e.Enabled, &created, &e.CreatedBy); err != nil {
		return e, err
	}
	e.CreatedAt = fromMS(created)
	err := json.Unmarshal([]byte(types), &e.EventTypes)
	return e, err
}

// CreateWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) CreateWebhookEndpoint(ctx context.Context, e assistant.WebhookEndpoint) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.Workspace, e.URL, jsonList(e.EventTypes), e.Secret, e.Enabled, ms(e.CreatedAt), e.CreatedBy)
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", e.Workspace)
	}
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return assistant.Errorf(assistant.EConflict, "an endpoint with id %s already exists", e.ID)
	}
	return err
}

// WebhookEndpoints implements assistant.WebhookStore.
func (s *DB) WebhookEndpoints(ctx context.Context, workspace string) ([]assistant.WebhookEndpoint, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE workspace = ? ORDER BY created_at, id`, workspace)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.WebhookEndpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func errNoEndpoint(id string) error {
	return assistant.Errorf(assistant.ENotFound, "no webhook endpoint with id %s", id)
}

// WebhookEndpoint implements assistant.WebhookStore.
func (s *DB) WebhookEndpoint(ctx context.Context, workspace, id string) (assistant.WebhookEndpoint, error) {
	e, err := scanEndpoint(s.db.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = ? AND workspace = ?`, id, workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return e, errNoEndpoint(id)
	}
	return e, err
}

// UpdateWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) UpdateWebhookEndpoint(ctx context.Context, e assistant.WebhookEndpoint) error {
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, event_types = ?, secret = ?, enabled = ? WHERE id = ? AND workspace = ?`,
		e.URL, jsonList(e.EventTypes), e.Secret, e.Enabled, e.ID, e.Workspace)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoEndpoint(e.ID)
	}
	return nil
}

// DeleteWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) DeleteWebhookEndpoint(ctx context.Context, workspace, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ? AND workspace = ?`, id, workspace)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoEndpoint(id)
	}
	return nil
}

const deliveryColumns = `d.id, d.event_id, d.endpoint_id, d.workspace, d.event_type, d.status, d.attempts, d.next_attempt_at,
	d.last_error, d.last_status, d.response_ms, d.created_at, d.delivered_at`

func scanDelivery(dst *assistant.WebhookDelivery) []any {
	return []any{&dst.ID, &dst.EventID, &dst.EndpointID, &dst.Workspace, &dst.EventType, &dst.Status, &dst.Attempts,
		msField{&dst.NextAttemptAt}, &dst.LastError, &dst.LastStatus, durMS{&dst.ResponseTime}, msField{&dst.CreatedAt}, nullMSField{&dst.DeliveredAt}}
}

// msField scans Unix milliseconds into a time.
type msField struct{ t *time.Time }

func (f msField) Scan(v any) error {
	n, _ := v.(int64)
	*f.t = fromMS(n)
	return nil
}

type nullMSField struct{ t **time.Time }

func (f nullMSField) Scan(v any) error {
	if n, ok := v.(int64); ok {
		t := fromMS(n)
		*f.t = &t
	} else {
		*f.t = nil
	}
	return nil
}

type durMS struct{ d *time.Duration }

func (f durMS) Scan(v any) error {
	n, _ := v.(int64)
	*f.d = time.Duration(n) * time.Millisecond
	return nil
}

// ClaimDeliveries implements assistant.WebhookStore.
func (s *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit, perEndpoint int) ([]assistant.DeliveryJob, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `WITH busy AS (
			SELECT endpoint_id, COUNT(*) AS n FROM webhook_deliveries
			WHERE status = 'pending' AND lease_until > ? GROUP BY endpoint_id),
		cand AS (
			SELECT d.id, d.next_attempt_at,
				ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) + COALESCE(b.n, 0) AS slot
			FROM webhook_deliveries d
			JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
			LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?))
		SELECT id FROM cand WHERE slot <= ? ORDER BY next_attempt_at, id LIMIT ?`,
		ms(now), ms(now), ms(now), perEndpoint, limit)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	jobs := make([]assistant.DeliveryJob, 0, len(ids))
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ?`,
			owner, ms(now.Add(lease)), id); err != nil {
			return nil, err
		}
		var j assistant.DeliveryJob
		var at int64
		var data, types string
		var created int64
		dst := append(scanDelivery(&j.Delivery), &j.Event.ID, &j.Event.Workspace, &j.Event.Type, &at, &data,
			&j.Endpoint.ID, &j.Endpoint.Workspace, &j.Endpoint.URL, &types, &j.Endpoint.Secret, &j.Endpoint.Enabled, &created, &j.Endpoint.CreatedBy)
		if err := tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+`, v.id, v.workspace, v.type, v.at, v.data,
				e.id, e.workspace, e.url, e.event_types, e.secret, e.enabled, e.created_at, e.created_by
			FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.id = ?`, id).Scan(dst...); err != nil {
			return nil, err
		}
		j.Event.At, j.Event.Data = fromMS(at), json.RawMessage(data)
		j.Endpoint.CreatedAt = fromMS(created)
		json.Unmarshal([]byte(types), &j.Endpoint.EventTypes)
		jobs = append(jobs, j)
	}
	return jobs, tx.Commit()
}

// FinishDelivery implements assistant.WebhookStore.
func (s *DB) FinishDelivery(ctx context.Context, id int64, owner string, r assistant.DeliveryResult) (bool, error) {
	var res sql.Result
	var err error
	rt := r.ResponseTime.Milliseconds()
	switch {
	case r.Delivered:
		res, err = s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = ?, last_status = ?, last_error = '',
			response_ms = ?, lease_owner = '', lease_until = NULL WHERE id = ? AND status != 'delivered'`, ms(r.At), r.Status, rt, id)
	case r.NextAttemptAt.IsZero():
		res, err = s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', last_status = ?, last_error = ?, response_ms = ?,
			lease_owner = '', lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'pending'`, r.Status, r.Error, rt, id, owner)
	default:
		res, err = s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_at = ?, last_status = ?, last_error = ?, response_ms = ?,
			lease_owner = '', lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'pending'`, ms(r.NextAttemptAt), r.Status, r.Error, rt, id, owner)
	}
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Deliveries implements assistant.WebhookStore.
func (s *DB) Deliveries(ctx context.Context, workspace, endpointID string, limit int) ([]assistant.WebhookDelivery, error) {
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d WHERE d.workspace = ?`
	args := []any{workspace}
	if endpointID != "" {
		q += ` AND d.endpoint_id = ?`
		args = append(args, endpointID)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY d.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.WebhookDelivery
	for rows.Next() {
		var d assistant.WebhookDelivery
		if err := rows.Scan(scanDelivery(&d)...); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ResendDelivery implements assistant.WebhookStore.
func (s *DB) ResendDelivery(ctx context.Context, workspace string, id int64, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, delivered_at = NULL,
		lease_owner = '', lease_until = NULL WHERE id = ? AND workspace = ?`, ms(now), id, workspace)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return assistant.Errorf(assistant.ENotFound, "no delivery with id %d", id)
	}
	return nil
}

// SubmitTurn implements assistant.WebhookStore.
func (s *DB) SubmitTurn(ctx context.Context, t assistant.AsyncTurn, maxQueued int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM async_turns WHERE workspace = ? AND state IN ('queued', 'running')`, t.Workspace).Scan(&n); err != nil {
		return err
	}
	if n >= maxQueued {
		return assistant.Errorf(assistant.ERateLimited, "the workspace has %d asynchronous turns waiting, the most it may", n)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO async_turns (id, workspace, key_id, state, request, submitted_at) VALUES (?, ?, ?, 'queued', ?, ?)`,
		t.ID, t.Workspace, t.KeyID, string(t.Request), ms(t.SubmittedAt)); err != nil {
		return err
	}
	return tx.Commit()
}

const turnColumns = `id, workspace, key_id, state, request, response, problem, submitted_at, completed_at, attempts`

func scanTurn(sc interface{ Scan(...any) error }) (assistant.AsyncTurn, error) {
	var t assistant.AsyncTurn
	var req, resp, prob sql.NullString
	var submitted int64
	var completed sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Workspace, &t.KeyID, &t.State, &req, &resp, &prob, &submitted, &completed, &t.Attempts); err != nil {
		return t, err
	}
	raw := func(v sql.NullString) json.RawMessage {
		if !v.Valid {
			return nil
		}
		return json.RawMessage(v.String)
	}
	t.Request, t.Response, t.Problem = raw(req), raw(resp), raw(prob)
	t.SubmittedAt, t.CompletedAt = fromMS(submitted), fromNullMS(completed)
	return t, nil
}

// ClaimTurns implements assistant.WebhookStore.
func (s *DB) ClaimTurns(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]assistant.AsyncTurn, error) {
	rows, err := s.db.QueryContext(ctx, `UPDATE async_turns SET state = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM async_turns WHERE state = 'queued' OR (state = 'running' AND lease_until <= ?)
			ORDER BY submitted_at, id LIMIT ?)
		RETURNING `+turnColumns, owner, ms(now.Add(lease)), ms(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []assistant.AsyncTurn
	for rows.Next() {
		t, err := scanTurn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RenewTurn implements assistant.WebhookStore.
func (s *DB) RenewTurn(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE async_turns SET lease_until = ? WHERE id = ? AND lease_owner = ? AND state = 'running'`, ms(until), id, owner)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// CompleteTurn implements assistant.WebhookStore.
func (s *DB) CompleteTurn(ctx context.Context, id, owner string, r assistant.TurnResult) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	state := assistant.TurnSucceeded
	if r.Response == nil {
		state = assistant.TurnFailed
	}
	keep := ""
	if !r.KeepRequest {
		keep = ", request = NULL"
	}
	t, err := scanTurn(tx.QueryRowContext(ctx, `UPDATE async_turns SET state = ?, response = ?, problem = ?, completed_at = ?,
		lease_owner = '', lease_until = NULL`+keep+` WHERE id = ? AND lease_owner = ? AND state = 'running' RETURNING `+turnColumns,
		state, nullRaw(r.Response), nullRaw(r.Problem), ms(r.At), id, owner))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := insertCitations(ctx, tx, r.Citations); err != nil {
		return false, err
	}
	ev := assistant.WebhookEvent{ID: assistant.NewID("msg_"), Workspace: t.Workspace, Type: assistant.EventChatTurnCompleted,
		At: r.At.UTC(), Data: assistant.TurnCompletedData(t)}
	if _, err := enqueueEvent(ctx, tx, ev); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

func nullRaw(b json.RawMessage) sql.NullString {
	if b == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: string(b), Valid: true}
}

// Turn implements assistant.WebhookStore.
func (s *DB) Turn(ctx context.Context, workspace, id string) (assistant.AsyncTurn, error) {
	t, err := scanTurn(s.db.QueryRowContext(ctx, `SELECT `+turnColumns+` FROM async_turns WHERE id = ? AND workspace = ?`, id, workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return t, assistant.Errorf(assistant.ENotFound, "no turn with id %s", id)
	}
	return t, err
}

// PurgeWebhooks implements assistant.WebhookStore.
func (s *DB) PurgeWebhooks(ctx context.Context, before time.Time) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	total := 0
	for _, q := range []string{
		`DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?`,
		`DELETE FROM webhook_events WHERE at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
		`DELETE FROM async_turns WHERE completed_at < ?`,
	} {
		res, err := tx.ExecContext(ctx, q, ms(before))
		if err != nil {
			return 0, err
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, tx.Commit()
}

// ReleaseLeases ends every lease of deliveries and turns: serve calls it
// at start, since on SQLite one process serves the file and a lease
// still held was its predecessor's (killed mid-delivery). Its deliveries
// and turns are due again at once instead of when the lease runs out.
func (s *DB) ReleaseLeases(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	a, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = '', lease_until = NULL WHERE lease_until IS NOT NULL`)
	if err != nil {
		return 0, err
	}
	b, err := tx.ExecContext(ctx, `UPDATE async_turns SET state = 'queued', lease_owner = '', lease_until = NULL WHERE state = 'running'`)
	if err != nil {
		return 0, err
	}
	n, _ := a.RowsAffected()
	m, _ := b.RowsAffected()
	return int(n + m), tx.Commit()
}
