package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's webhook-timestamp may be from
// the receiver's clock before VerifyWebhook refuses it (replay
// protection), as Standard Webhooks' reference libraries do.
const WebhookTolerance = 5 * time.Minute

// WebhookEvent is the body of a webhook delivery: the event's id (also
// the webhook-id header; use it to drop duplicates, since delivery is at
// least once), its type (key.created, key.revoked, key.rolled,
// chat.turn.completed), when it happened, and its data (docs/webhooks.md).
type WebhookEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// ErrWebhookSignature is returned by VerifyWebhook for a delivery that
// does not verify.
var ErrWebhookSignature = errors.New("client: the webhook delivery does not verify")

// VerifyWebhook checks a webhook delivery as Standard Webhooks specifies
// and returns its event: the webhook-id, webhook-timestamp and
// webhook-signature headers must be present, the timestamp within
// WebhookTolerance of now, and one of the signatures ("v1,<base64>",
// space-separated) equal, in constant time, to HMAC-SHA256 with the
// endpoint's secret ("whsec_..." as shown at creation) over
// "id.timestamp.body". body must be the request body exactly as received.
// Errors wrap ErrWebhookSignature.
func VerifyWebhook(secret string, header http.Header, body []byte, now time.Time) (*WebhookEvent, error) {
	s := strings.TrimPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil || len(key) == 0 {
		return nil, errors.New("client: the webhook secret is not a whsec_ base64 secret")
	}
	id, tsText, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || tsText == "" || sigs == "" {
		return nil, fmt.Errorf("%w: missing webhook-id, webhook-timestamp or webhook-signature", ErrWebhookSignature)
	}
	secs, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: the timestamp is not a number", ErrWebhookSignature)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > WebhookTolerance || d < -WebhookTolerance {
		return nil, fmt.Errorf("%w: the timestamp is more than %v away", ErrWebhookSignature, WebhookTolerance)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + tsText + "."))
	mac.Write(body)
	want := []byte("v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), want) {
			var ev WebhookEvent
			if err := json.Unmarshal(body, &ev); err != nil {
				// A verified body that is not an event (the
				// specification's own test payloads): the id alone.
				return &WebhookEvent{ID: id, Data: json.RawMessage(body)}, nil
			}
			return &ev, nil
		}
	}
	return nil, fmt.Errorf("%w: no signature matches", ErrWebhookSignature)
}

// WebhookKey is a key as key events describe it (never its secret).
type WebhookKey struct {
	ID        string     `json:"id"`
	Workspace string     `json:"workspace"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// KeyEventData is the Data of key.created, key.revoked and key.rolled:
// the key as it is after the change and, for key.rolled, its replacement.
type KeyEventData struct {
	Key        WebhookKey  `json:"key"`
	ReplacedBy *WebhookKey `json:"replaced_by,omitempty"`
}

// TurnCompletedData is the Data of chat.turn.completed.
type TurnCompletedData struct {
	TurnID      string        `json:"turn_id"`
	Status      string        `json:"status"` // succeeded or failed
	KeyID       string        `json:"key_id"`
	SubmittedAt time.Time     `json:"submitted_at"`
	CompletedAt time.Time     `json:"completed_at"`
	Response    *ChatResponse `json:"response,omitempty"`
	Error       *Error        `json:"error,omitempty"`
}

// Turn is an asynchronous turn's state (GET /api/v1/chat/turns/{id}).
type Turn struct {
	ID          string        `json:"id"`
	State       string        `json:"state"` // queued, running, succeeded or failed
	SubmittedAt time.Time     `json:"submitted_at"`
	CompletedAt *time.Time    `json:"completed_at,omitempty"`
	Response    *ChatResponse `json:"response,omitempty"`
	Error       *Error        `json:"error,omitempty"`
}

// ChatAsync submits a turn to run in the background (POST /api/v1/chat
// with Prefer: respond-async) and returns it queued; poll it with Turn, or
// receive chat.turn.completed on a webhook. It counts against the key's
// limit; a 429 (the key's limit, or the workspace's queue full) is retried
// as Chat's are.
func (c *Client) ChatAsync(ctx context.Context, req ChatRequest) (*Turn, error) {
	var out Turn
	if err := c.call(ctx, request{method: "POST", path: "/api/v1/chat", body: req, prefer: "respond-async", retried: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Turn returns an asynchronous turn of the key's workspace (GET
// /api/v1/chat/turns/{id}); a 404 *Error when there is none.
func (c *Client) Turn(ctx context.Context, id string) (*Turn, error) {
	var out Turn
	if err := c.call(ctx, request{method: "GET", path: "/api/v1/chat/turns/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
