package api

import (
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/chat"
)

// The webhook events the service sends, documented in the OpenAPI
// document's webhooks section (OpenAPI 3.1). The types below only
// describe the bodies; internal/assistant builds them (NewKeyEvent,
// TurnCompletedData) and internal/webhook wraps them as
// {id, type, timestamp, data}.

// WebhookKey is a key as events describe it: never its hash.
type WebhookKey struct {
	ID        string     `json:"id" doc:"The key id (12 characters)."`
	Workspace string     `json:"workspace"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by" doc:"An admin's email, or cli."`
	ExpiresAt *time.Time `json:"expires_at" nullable:"true"`
	RevokedAt *time.Time `json:"revoked_at" nullable:"true"`
}

// KeyEvent is the body of key.created, key.revoked and key.rolled.
type KeyEvent struct {
	ID        string       `json:"id" doc:"The event id, also the webhook-id header: the same on every retry, so receivers drop duplicates by it."`
	Type      string       `json:"type" enum:"key.created,key.revoked,key.rolled"`
	Timestamp time.Time    `json:"timestamp" doc:"When the change happened."`
	Data      KeyEventData `json:"data"`
}

// KeyEventData is the data of a key event.
type KeyEventData struct {
	Key        WebhookKey  `json:"key" doc:"The key as it is after the change (for key.rolled: the old key, revoked or expiring at the end of the grace period)."`
	ReplacedBy *WebhookKey `json:"replaced_by,omitempty" doc:"key.rolled only: the replacement."`
}

// TurnCompletedEvent is the body of chat.turn.completed.
type TurnCompletedEvent struct {
	ID        string            `json:"id" doc:"The event id, also the webhook-id header."`
	Type      string            `json:"type" enum:"chat.turn.completed"`
	Timestamp time.Time         `json:"timestamp" doc:"When the turn completed."`
	Data      TurnCompletedData `json:"data"`
}

// TurnCompletedData is the data of chat.turn.completed.
type TurnCompletedData struct {
	TurnID      string         `json:"turn_id" doc:"The id the 202 of POST /api/v1/chat gave."`
	Status      string         `json:"status" enum:"succeeded,failed"`
	KeyID       string         `json:"key_id" doc:"The key that submitted the turn."`
	SubmittedAt time.Time      `json:"submitted_at"`
	CompletedAt time.Time      `json:"completed_at"`
	Response    *chat.Response `json:"response,omitempty" doc:"The chat response object, as GET /api/v1/chat/turns/{id} returns it."`
	Error       *Problem       `json:"error,omitempty" doc:"The problem document of a failed turn."`
}

// documentWebhooks adds the webhooks section.
func documentWebhooks(api huma.API) {
	reg := api.OpenAPI().Components.Schemas
	headers := []*huma.Param{
		{Name: "webhook-id", In: "header", Required: true, Description: "The event id (msg_...).", Schema: &huma.Schema{Type: huma.TypeString}},
		{Name: "webhook-timestamp", In: "header", Required: true, Description: "Seconds since the Unix epoch when this attempt was sent; refuse one more than 5 minutes from your clock.", Schema: &huma.Schema{Type: huma.TypeString}},
		{Name: "webhook-signature", In: "header", Required: true, Description: "v1,<base64 HMAC-SHA256 with the endpoint's secret over webhook-id.webhook-timestamp.body> (Standard Webhooks); several space-separated signatures may be sent.", Schema: &huma.Schema{Type: huma.TypeString}},
	}
	op := func(id, summary, desc string, body reflect.Type, name string) *huma.PathItem {
		return &huma.PathItem{Post: &huma.Operation{
			OperationID: id, Summary: summary, Description: desc + " Delivered at least once, signed as Standard Webhooks specifies; " +
				"retried with exponential backoff for up to 3 days until the endpoint answers 2xx within 10 seconds. Redirects are not followed.",
			Tags:       []string{"Webhooks"},
			Parameters: headers,
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/json": {Schema: reg.Schema(body, true, name)},
			}},
			Responses: map[string]*huma.Response{
				"200": {Description: "Any 2xx status acknowledges the event; anything else, or no answer within 10 seconds, is retried."},
			},
			Security: []map[string][]string{},
		}}
	}
	keyType := reflect.TypeOf(KeyEvent{})
	api.OpenAPI().Webhooks = map[string]*huma.PathItem{
		"key.created": op("webhookKeyCreated", "A key was created", "An API key of the workspace was created, in the admin area, on the command line or by a roll.", keyType, "KeyEvent"),
		"key.revoked": op("webhookKeyRevoked", "A key was revoked", "An API key of the workspace was revoked (at once, or by a roll without a grace period).", keyType, "KeyEvent"),
		"key.rolled":  op("webhookKeyRolled", "A key was rolled", "An API key was replaced: data.key is the old key (revoked, or expiring at the end of the grace period), data.replaced_by the new one.", keyType, "KeyEvent"),
		"chat.turn.completed": op("webhookChatTurnCompleted", "An asynchronous turn completed",
			"A turn submitted with Prefer: respond-async succeeded or failed.", reflect.TypeOf(TurnCompletedEvent{}), "TurnCompletedEvent"),
	}
}
