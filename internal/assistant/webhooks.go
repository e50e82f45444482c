package assistant

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"time"
)

// Webhook event types. Each event is delivered to the workspace's enabled
// endpoints that listen to its type (docs/webhooks.md).
const (
	EventKeyCreated         = "key.created"
	EventKeyRevoked         = "key.revoked"
	EventKeyRolled          = "key.rolled"
	EventChatTurnCompleted  = "chat.turn.completed"
	webhookIDAlphabet       = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	webhookRandomCharacters = 24
)

// EventTypes lists every event type, in the order the admin area shows them.
var EventTypes = []string{EventKeyCreated, EventKeyRevoked, EventKeyRolled, EventChatTurnCompleted}

// ValidEventType reports whether t is one of EventTypes.
func ValidEventType(t string) bool { return slices.Contains(EventTypes, t) }

// NewID returns prefix followed by 24 random base62 characters (about 143
// bits from crypto/rand): the ids of webhook events ("msg_"), endpoints
// ("we_") and asynchronous turns ("turn_").
func NewID(prefix string) string {
	b := make([]byte, webhookRandomCharacters)
	rand.Read(b)
	for i := range b {
		// 62*4 = 248: bytes from 248 up are rare; folding them adds a
		// negligible bias to an identifier (not a secret).
		b[i] = webhookIDAlphabet[int(b[i])%len(webhookIDAlphabet)]
	}
	return prefix + string(b)
}

// WebhookEndpoint is a URL of a workspace that receives events. Secret is
// the signing secret as the store keeps it: sealed (encrypted) by
// internal/webhook, never the plaintext; the store does not read it.
type WebhookEndpoint struct {
	ID         string // "we_" + 24 base62 characters
	Workspace  string
	URL        string
	EventTypes []string // a subset of EventTypes, in that order
	Secret     []byte   // sealed signing secret
	Enabled    bool
	CreatedAt  time.Time
	CreatedBy  string
}

// Wants reports whether the endpoint listens to events of type t.
func (e *WebhookEndpoint) Wants(t string) bool { return slices.Contains(e.EventTypes, t) }

// WebhookEvent is one event of the outbox. Data is its JSON body, delivered
// as {"id","type","timestamp","data"} (see internal/webhook).
type WebhookEvent struct {
	ID        string // "msg_" + 24 base62 characters: the webhook-id header
	Workspace string
	Type      string
	At        time.Time
	Data      json.RawMessage
}

// NewKeyEvent returns the event of type t about key k at `at`. The stores
// call it inside the transaction that changed the key. extra, when not
// nil, is merged into the data (key.rolled names the replacement).
func NewKeyEvent(t string, k APIKey, at time.Time, extra map[string]any) WebhookEvent {
	data := map[string]any{"key": KeyEventData(k)}
	for name, v := range extra {
		data[name] = v
	}
	b, _ := json.Marshal(data)
	return WebhookEvent{ID: NewID("msg_"), Workspace: k.Workspace, Type: t, At: at.UTC(), Data: b}
}

// KeyEventData is what a key event says about a key: never its hash.
func KeyEventData(k APIKey) map[string]any {
	rfc := func(t *time.Time) any {
		if t == nil {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return map[string]any{
		"id": k.ID, "workspace": k.Workspace, "name": k.Name, "created_at": k.CreatedAt.UTC().Format(time.RFC3339Nano),
		"created_by": k.CreatedBy, "expires_at": rfc(k.ExpiresAt), "revoked_at": rfc(k.RevokedAt),
	}
}

// Delivery states.
const (
	DeliveryPending   = "pending"   // waiting for its next attempt (or in flight, under a lease)
	DeliveryDelivered = "delivered" // the endpoint answered 2xx
	DeliveryFailed    = "failed"    // every attempt of the retry period failed; a resend makes it pending again
)

// WebhookDelivery is one event for one endpoint: the delivery log's row.
type WebhookDelivery struct {
	ID            int64
	EventID       string
	EndpointID    string
	Workspace     string
	EventType     string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	LastStatus    int           // HTTP status of the last attempt (0: none or no answer)
	ResponseTime  time.Duration // of the last attempt
	CreatedAt     time.Time
	DeliveredAt   *time.Time
}

// DeliveryJob is a claimed delivery with what sending it needs.
type DeliveryJob struct {
	Delivery WebhookDelivery
	Event    WebhookEvent
	Endpoint WebhookEndpoint
}

// DeliveryResult is the outcome of one attempt. A zero NextAttemptAt with
// Delivered false marks the delivery failed for good.
type DeliveryResult struct {
	Delivered     bool
	Status        int
	Error         string
	ResponseTime  time.Duration
	At            time.Time
	NextAttemptAt time.Time
}

// Async turn states.
const (
	TurnQueued    = "queued"
	TurnRunning   = "running"
	TurnSucceeded = "succeeded"
	TurnFailed    = "failed"
)

// AsyncTurn is a chat turn submitted with Prefer: respond-async. Request
// holds the chat request (message, history, ...) until the turn completes;
// it is removed then, unless the workspace keeps turns for review.
type AsyncTurn struct {
	ID          string // "turn_" + 24 base62 characters
	Workspace   string
	KeyID       string
	State       string
	Request     json.RawMessage // nil once completed
	Response    json.RawMessage // the chat response object, when succeeded
	Problem     json.RawMessage // the problem document, when failed
	SubmittedAt time.Time
	CompletedAt *time.Time
	Attempts    int
}

// TurnResult is how a turn ended: Response (succeeded) or Problem (failed).
type TurnResult struct {
	Response  json.RawMessage
	Problem   json.RawMessage
	Citations []CitationEvent
	At        time.Time
	// KeepRequest keeps the request text (the workspace's review
	// setting); false removes it.
	KeepRequest bool
}

// WebhookStore holds webhook endpoints, the outbox of events, the
// delivery log and asynchronous turns. Implementations: internal/sqlite
// and internal/postgres, held to internal/storetest.
//
// Events are written in the transaction of what caused them: CreateKey
// writes key.created, RevokeKey key.revoked (only when it revokes),
// RollKey key.created, key.rolled and (when it revokes the old key)
// key.revoked, CompleteTurn chat.turn.completed. An event gets one
// pending delivery per enabled endpoint of its workspace listening to its
// type at that moment; an event no endpoint listens to is not stored.
type WebhookStore interface {
	// CreateWebhookEndpoint stores a new endpoint (ENotFound: no such
	// workspace; EConflict: the id exists).
	CreateWebhookEndpoint(ctx context.Context, e WebhookEndpoint) error
	// WebhookEndpoints returns the workspace's endpoints, oldest first.
	WebhookEndpoints(ctx context.Context, workspace string) ([]WebhookEndpoint, error)
	// WebhookEndpoint returns one endpoint of the workspace (ENotFound).
	WebhookEndpoint(ctx context.Context, workspace, id string) (WebhookEndpoint, error)
	// UpdateWebhookEndpoint replaces the endpoint's URL, event types,
	// secret and enabled flag (ENotFound).
	UpdateWebhookEndpoint(ctx context.Context, e WebhookEndpoint) error
	// DeleteWebhookEndpoint deletes the endpoint and its deliveries
	// (ENotFound).
	DeleteWebhookEndpoint(ctx context.Context, workspace, id string) error

	// EnqueueEvent writes an event and its deliveries in one transaction,
	// returning how many deliveries it made.
	EnqueueEvent(ctx context.Context, e WebhookEvent) (int, error)
	// ClaimDeliveries leases up to limit pending deliveries that are due
	// at now (next attempt reached, no live lease) to owner until
	// now+lease, counting the attempt; an endpoint never has more than
	// perEndpoint deliveries under a live lease, across every instance.
	// A delivery whose lease ran out (its instance died) is due again.
	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit, perEndpoint int) ([]DeliveryJob, error)
	// FinishDelivery records an attempt's result and ends the lease, if
	// owner still holds it (otherwise it reports false and changes
	// nothing, except that a success is always recorded).
	FinishDelivery(ctx context.Context, id int64, owner string, r DeliveryResult) (bool, error)
	// Deliveries returns the workspace's latest deliveries, newest first
	// (endpointID "" for every endpoint).
	Deliveries(ctx context.Context, workspace, endpointID string, limit int) ([]WebhookDelivery, error)
	// ResendDelivery makes a delivery of the workspace pending and due at
	// now (ENotFound).
	ResendDelivery(ctx context.Context, workspace string, id int64, now time.Time) error

	// SubmitTurn stores a queued turn unless the workspace already has
	// maxQueued turns queued or running (ERateLimited).
	SubmitTurn(ctx context.Context, t AsyncTurn, maxQueued int) error
	// ClaimTurns leases up to limit queued turns (or running ones whose
	// lease ran out) to owner until now+lease, marking them running.
	ClaimTurns(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]AsyncTurn, error)
	// RenewTurn extends owner's lease of a running turn to until,
	// reporting false when owner no longer holds it.
	RenewTurn(ctx context.Context, id, owner string, until time.Time) (bool, error)
	// CompleteTurn ends a turn owner holds: its state, response or
	// problem, its citation events and its chat.turn.completed event, in
	// one transaction; the request is removed unless r.KeepRequest. It
	// reports false (and changes nothing) when owner no longer holds it.
	CompleteTurn(ctx context.Context, id, owner string, r TurnResult) (bool, error)
	// Turn returns a turn of the workspace (ENotFound).
	Turn(ctx context.Context, workspace, id string) (AsyncTurn, error)
	// PurgeWebhooks deletes finished deliveries, their events and
	// completed turns older than before, returning how many rows went.
	PurgeWebhooks(ctx context.Context, before time.Time) (int, error)
}

// TurnCompletedData is the data of a chat.turn.completed event.
func TurnCompletedData(t AsyncTurn) json.RawMessage {
	data := map[string]any{"turn_id": t.ID, "status": t.State, "key_id": t.KeyID,
		"submitted_at": t.SubmittedAt.UTC().Format(time.RFC3339Nano)}
	if t.CompletedAt != nil {
		data["completed_at"] = t.CompletedAt.UTC().Format(time.RFC3339Nano)
	}
	if t.Response != nil {
		data["response"] = t.Response
	}
	if t.Problem != nil {
		data["error"] = t.Problem
	}
	b, _ := json.Marshal(data)
	return b
}
