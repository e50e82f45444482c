package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The webhook store: endpoints, the outbox of events, deliveries and
// asynchronous turns (assistant.WebhookStore). Several instances claim
// work at once: a delivery claim locks the enabled endpoints' rows FOR
// UPDATE SKIP LOCKED (an endpoint another instance is claiming for is
// skipped, which also keeps the per-endpoint cap exact across instances)
// and leases the deliveries it takes; a turn claim takes queued turns FOR
// UPDATE SKIP LOCKED. A lease that runs out (its instance died) makes the
// work due again.

var _ assistant.WebhookStore = (*DB)(nil)

// enqueueEvent writes e and one pending delivery per enabled endpoint of
// its workspace listening to its type, in tx.
func enqueueEvent(ctx context.Context, tx pgx.Tx, e assistant.WebhookEvent) (int, error) {
	tag, err := tx.Exec(ctx, `WITH ev AS (
			INSERT INTO webhook_events (id, workspace, type, at, data)
			SELECT $1, $2, $3, $4, $5
			WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace = $2 AND enabled AND $3 = ANY (event_types))
			RETURNING id)
		INSERT INTO webhook_deliveries (event_id, endpoint_id, workspace, event_type, status, next_attempt_at, created_at)
		SELECT ev.id, e.id, $2, $3, 'pending', $4, $4 FROM ev, webhook_endpoints e
		WHERE e.workspace = $2 AND e.enabled AND $3 = ANY (e.event_types)`,
		e.ID, e.Workspace, e.Type, ts(e.At), string(e.Data))
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// EnqueueEvent implements assistant.WebhookStore.
func (s *DB) EnqueueEvent(ctx context.Context, e assistant.WebhookEvent) (n int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, err = enqueueEvent(ctx, tx, e)
		return err
	})
	return n, err
}

const endpointColumns = `id, workspace, url, event_types, secret, enabled, created_at, created_by`

func scanEndpoint(r pgx.Row) (assistant.WebhookEndpoint, error) {
	var e assistant.WebhookEndpoint
	err := r.Scan(&e.ID, &e.Workspace, &e.URL, &e.EventTypes, &e.Secret, &e.Enabled, &e.CreatedAt, &e.CreatedBy)
	e.CreatedAt = e.CreatedAt.UTC()
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	return e, err
}

// CreateWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) CreateWebhookEndpoint(ctx context.Context, e assistant.WebhookEndpoint) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		e.ID, e.Workspace, e.URL, list(e.EventTypes), e.Secret, e.Enabled, ts(e.CreatedAt), e.CreatedBy)
	switch pgCode(err) {
	case foreignKeyViolation:
		return assistant.Errorf(assistant.ENotFound, "workspace %q does not exist", e.Workspace)
	case uniqueViolation:
		return assistant.Errorf(assistant.EConflict, "an endpoint with id %s already exists", e.ID)
	}
	return err
}

// WebhookEndpoints implements assistant.WebhookStore.
func (s *DB) WebhookEndpoints(ctx context.Context, workspace string) ([]assistant.WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE workspace = $1 ORDER BY created_at, id`, workspace)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.CollectableRow) (assistant.WebhookEndpoint, error) { return scanEndpoint(r) })
}

func errNoEndpoint(id string) error {
	return assistant.Errorf(assistant.ENotFound, "no webhook endpoint with id %s", id)
}

// WebhookEndpoint implements assistant.WebhookStore.
func (s *DB) WebhookEndpoint(ctx context.Context, workspace, id string) (assistant.WebhookEndpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1 AND workspace = $2`, id, workspace))
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.WebhookEndpoint{}, errNoEndpoint(id)
	}
	return e, err
}

// UpdateWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) UpdateWebhookEndpoint(ctx context.Context, e assistant.WebhookEndpoint) error {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_endpoints SET url = $1, event_types = $2, secret = $3, enabled = $4 WHERE id = $5 AND workspace = $6`,
		e.URL, list(e.EventTypes), e.Secret, e.Enabled, e.ID, e.Workspace)
	if err == nil && tag.RowsAffected() == 0 {
		return errNoEndpoint(e.ID)
	}
	return err
}

// DeleteWebhookEndpoint implements assistant.WebhookStore.
func (s *DB) DeleteWebhookEndpoint(ctx context.Context, workspace, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND workspace = $2`, id, workspace)
	if err == nil && tag.RowsAffected() == 0 {
		return errNoEndpoint(id)
	}
	return err
}

const deliveryColumns = `d.id, d.event_id, d.endpoint_id, d.workspace, d.event_type, d.status, d.attempts, d.next_attempt_at,
	d.last_error, d.last_status, d.response_ms, d.created_at, d.delivered_at`

func deliveryDest(d *assistant.WebhookDelivery, ms *int64) []any {
	return []any{&d.ID, &d.EventID, &d.EndpointID, &d.Workspace, &d.EventType, &d.Status, &d.Attempts, &d.NextAttemptAt,
		&d.LastError, &d.LastStatus, ms, &d.CreatedAt, &d.DeliveredAt}
}

func fixDelivery(d *assistant.WebhookDelivery, ms int64) {
	d.ResponseTime = time.Duration(ms) * time.Millisecond
	d.NextAttemptAt, d.CreatedAt, d.DeliveredAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC(), utc(d.DeliveredAt)
}

// ClaimDeliveries implements assistant.WebhookStore.
func (s *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit, perEndpoint int) ([]assistant.DeliveryJob, error) {
	var jobs []assistant.DeliveryJob
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		jobs = nil
		rows, err := tx.Query(ctx, `WITH eps AS (
				SELECT id FROM webhook_endpoints WHERE enabled FOR NO KEY UPDATE SKIP LOCKED),
			busy AS (
				SELECT endpoint_id, COUNT(*) AS n FROM webhook_deliveries
				WHERE status = 'pending' AND lease_until > $1 GROUP BY endpoint_id),
			cand AS (
				SELECT d.id, d.next_attempt_at,
					ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) + COALESCE(b.n, 0) AS slot
				FROM webhook_deliveries d JOIN eps ON eps.id = d.endpoint_id
				LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
				WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)),
			pick AS (SELECT id FROM cand WHERE slot <= $2 ORDER BY next_attempt_at, id LIMIT $3)
			UPDATE webhook_deliveries d SET lease_owner = $4, lease_until = $5, attempts = d.attempts + 1
			FROM pick WHERE d.id = pick.id
				-- Checked again on the row as it is when its lock is granted: another
				-- instance's claim that committed meanwhile (the CTEs read the snapshot
				-- from before it) must not be taken over.
				AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= $1)
			RETURNING d.id`, ts(now), perEndpoint, limit, owner, ts(now.Add(lease)))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT `+deliveryColumns+`, v.id, v.workspace, v.type, v.at, v.data,
				e.id, e.workspace, e.url, e.event_types, e.secret, e.enabled, e.created_at, e.created_by
			FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.id = ANY ($1) ORDER BY d.next_attempt_at, d.id`, ids)
		if err != nil {
			return err
		}
		jobs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (assistant.DeliveryJob, error) {
			var j assistant.DeliveryJob
			var ms int64
			var data string
			dst := append(deliveryDest(&j.Delivery, &ms), &j.Event.ID, &j.Event.Workspace, &j.Event.Type, &j.Event.At, &data,
				&j.Endpoint.ID, &j.Endpoint.Workspace, &j.Endpoint.URL, &j.Endpoint.EventTypes, &j.Endpoint.Secret, &j.Endpoint.Enabled,
				&j.Endpoint.CreatedAt, &j.Endpoint.CreatedBy)
			err := r.Scan(dst...)
			fixDelivery(&j.Delivery, ms)
			j.Event.At, j.Event.Data, j.Endpoint.CreatedAt = j.Event.At.UTC(), json.RawMessage(data), j.Endpoint.CreatedAt.UTC()
			return j, err
		})
		return err
	})
	return jobs, err
}

// FinishDelivery implements assistant.WebhookStore.
func (s *DB) FinishDelivery(ctx context.Context, id int64, owner string, r assistant.DeliveryResult) (bool, error) {
	rt := r.ResponseTime.Milliseconds()
	var q string
	var args []any
	switch {
	case r.Delivered:
		q = `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $2, last_status = $3, last_error = '', response_ms = $4,
			lease_owner = '', lease_until = NULL WHERE id = $1 AND status <> 'delivered'`
		args = []any{id, ts(r.At), r.Status, rt}
	case r.NextAttemptAt.IsZero():
		q = `UPDATE webhook_deliveries SET status = 'failed', last_status = $3, last_error = $4, response_ms = $5,
			lease_owner = '', lease_until = NULL WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`
		args = []any{id, owner, r.Status, r.Error, rt}
	default:
		q = `UPDATE webhook_deliveries SET next_attempt_at = $6, last_status = $3, last_error = $4, response_ms = $5,
			lease_owner = '', lease_until = NULL WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`
		args = []any{id, owner, r.Status, r.Error, rt, ts(r.NextAttemptAt)}
	}
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Deliveries implements assistant.WebhookStore.
func (s *DB) Deliveries(ctx context.Context, workspace, endpointID string, limit int) ([]assistant.WebhookDelivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		WHERE d.workspace = $1 AND ($2 = '' OR d.endpoint_id = $2) ORDER BY d.id DESC LIMIT $3`, workspace, endpointID, limit)
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.CollectableRow) (assistant.WebhookDelivery, error) {
		var d assistant.WebhookDelivery
		var ms int64
		err := r.Scan(deliveryDest(&d, &ms)...)
		fixDelivery(&d, ms)
		return d, err
	})
}

// ResendDelivery implements assistant.WebhookStore.
func (s *DB) ResendDelivery(ctx context.Context, workspace string, id int64, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, delivered_at = NULL,
		lease_owner = '', lease_until = NULL WHERE id = $2 AND workspace = $3`, ts(now), id, workspace)
	if err == nil && tag.RowsAffected() == 0 {
		return assistant.Errorf(assistant.ENotFound, "no delivery with id %d", id)
	}
	return err
}

// SubmitTurn implements assistant.WebhookStore. A transaction-level
// advisory lock per workspace makes the count and the insert one step
// across instances.
func (s *DB) SubmitTurn(ctx context.Context, t assistant.AsyncTurn, maxQueued int) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(s.knowledgeLock), t.Workspace); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM async_turns WHERE workspace = $1 AND state IN ('queued', 'running')`, t.Workspace).Scan(&n); err != nil {
			return err
		}
		if n >= maxQueued {
			return assistant.Errorf(assistant.ERateLimited, "the workspace has %d asynchronous turns waiting, the most it may", n)
		}
		_, err := tx.Exec(ctx, `INSERT INTO async_turns (id, workspace, key_id, state, request, submitted_at) VALUES ($1, $2, $3, 'queued', $4, $5)`,
			t.ID, t.Workspace, t.KeyID, string(t.Request), ts(t.SubmittedAt))
		return err
	})
}

const turnColumns = `id, workspace, key_id, state, request, response, problem, submitted_at, completed_at, attempts`

func scanTurn(r pgx.Row) (assistant.AsyncTurn, error) {
	var t assistant.AsyncTurn
	var req, resp, prob *string
	err := r.Scan(&t.ID, &t.Workspace, &t.KeyID, &t.State, &req, &resp, &prob, &t.SubmittedAt, &t.CompletedAt, &t.Attempts)
	raw := func(v *string) json.RawMessage {
		if v == nil {
			return nil
		}
		return json.RawMessage(*v)
	}
	t.Request, t.Response, t.Problem = raw(req), raw(resp), raw(prob)
	t.SubmittedAt, t.CompletedAt = t.SubmittedAt.UTC(), utc(t.CompletedAt)
	return t, err
}

// ClaimTurns implements assistant.WebhookStore.
func (s *DB) ClaimTurns(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]assistant.AsyncTurn, error) {
	rows, err := s.pool.Query(ctx, `WITH pick AS (
			SELECT id FROM async_turns WHERE state = 'queued' OR (state = 'running' AND lease_until <= $1)
			ORDER BY submitted_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
		UPDATE async_turns t SET state = 'running', lease_owner = $3, lease_until = $4, attempts = t.attempts + 1
		FROM pick WHERE t.id = pick.id
		RETURNING t.id, t.workspace, t.key_id, t.state, t.request, t.response, t.problem, t.submitted_at, t.completed_at, t.attempts`,
		ts(now), limit, owner, ts(now.Add(lease)))
	if err != nil {
		return nil, err
	}
	return collectRows(rows, func(r pgx.CollectableRow) (assistant.AsyncTurn, error) { return scanTurn(r) })
}

// RenewTurn implements assistant.WebhookStore.
func (s *DB) RenewTurn(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE async_turns SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND state = 'running'`, ts(until), id, owner)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// CompleteTurn implements assistant.WebhookStore.
func (s *DB) CompleteTurn(ctx context.Context, id, owner string, r assistant.TurnResult) (ok bool, err error) {
	state := assistant.TurnSucceeded
	if r.Response == nil {
		state = assistant.TurnFailed
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		t, err := scanTurn(tx.QueryRow(ctx, `UPDATE async_turns SET state = $1, response = $2, problem = $3, completed_at = $4,
			lease_owner = '', lease_until = NULL, request = CASE WHEN $7 THEN request END
			WHERE id = $5 AND lease_owner = $6 AND state = 'running' RETURNING `+turnColumns,
			state, nullRaw(r.Response), nullRaw(r.Problem), ts(r.At), id, owner, r.KeepRequest))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := insertCitations(ctx, tx, r.Citations); err != nil {
			return err
		}
		ev := assistant.WebhookEvent{ID: assistant.NewID("msg_"), Workspace: t.Workspace, Type: assistant.EventChatTurnCompleted,
			At: r.At.UTC(), Data: assistant.TurnCompletedData(t)}
		if _, err := enqueueEvent(ctx, tx, ev); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

func nullRaw(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	v := string(b)
	return &v
}

// Turn implements assistant.WebhookStore.
func (s *DB) Turn(ctx context.Context, workspace, id string) (assistant.AsyncTurn, error) {
	t, err := scanTurn(s.pool.QueryRow(ctx, `SELECT `+turnColumns+` FROM async_turns WHERE id = $1 AND workspace = $2`, id, workspace))
	if errors.Is(err, pgx.ErrNoRows) {
		return assistant.AsyncTurn{}, assistant.Errorf(assistant.ENotFound, "no turn with id %s", id)
	}
	return t, err
}

// PurgeWebhooks implements assistant.WebhookStore.
func (s *DB) PurgeWebhooks(ctx context.Context, before time.Time) (total int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		total = 0
		for _, q := range []string{
			`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1`,
			`DELETE FROM webhook_events v WHERE at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id)`,
			`DELETE FROM async_turns WHERE completed_at < $1`,
		} {
			tag, err := tx.Exec(ctx, q, ts(before))
			if err != nil {
				return err
			}
			total += int(tag.RowsAffected())
		}
		return nil
	})
	return total, err
}
