package webhook

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Endpoints manages a workspace's webhook endpoints for the admin area and
// the command line alike: URLs are checked by the guard, secrets are made
// here, shown once, and stored sealed.
type Endpoints struct {
	Store  assistant.WebhookStore
	Sealer *Sealer // nil: webhooks are off (no ASSISTANT_WEBHOOK_KEY)
	Guard  Guard
	Now    func() time.Time
}

// MaxEndpoints bounds a workspace's endpoints.
const MaxEndpoints = 20

// ErrOff is the error of every change while webhooks are off.
var ErrOff = assistant.Errorf(assistant.EConflict, "Webhooks are off: set ASSISTANT_WEBHOOK_KEY (at least 32 characters, the same on every instance) and restart.")

// ParseEventTypes reads a list of event types (comma- or space-separated,
// or repeated values); empty means all. Unknown types are EInvalid.
func ParseEventTypes(values ...string) ([]string, error) {
	want := map[string]bool{}
	for _, v := range values {
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			if !assistant.ValidEventType(t) {
				return nil, assistant.Errorf(assistant.EInvalid, "%q is not an event type (%s)", t, strings.Join(assistant.EventTypes, ", "))
			}
			want[t] = true
		}
	}
	var out []string
	for _, t := range assistant.EventTypes {
		if want[t] || len(want) == 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// Create adds an endpoint, enabled, and returns it with its signing
// secret, which is never shown again.
func (m *Endpoints) Create(ctx context.Context, workspace, rawURL string, types []string, actor string) (assistant.WebhookEndpoint, string, error) {
	if m.Sealer == nil {
		return assistant.WebhookEndpoint{}, "", ErrOff
	}
	rawURL = strings.TrimSpace(rawURL)
	if err := m.Guard.CheckURL(ctx, rawURL); err != nil {
		return assistant.WebhookEndpoint{}, "", assistant.Errorf(assistant.EInvalid, "The URL is refused: %v.", err)
	}
	if len(types) == 0 {
		return assistant.WebhookEndpoint{}, "", assistant.Errorf(assistant.EInvalid, "Choose at least one event type.")
	}
	existing, err := m.Store.WebhookEndpoints(ctx, workspace)
	if err != nil {
		return assistant.WebhookEndpoint{}, "", err
	}
	if len(existing) >= MaxEndpoints {
		return assistant.WebhookEndpoint{}, "", assistant.Errorf(assistant.EConflict, "A workspace has at most %d webhook endpoints.", MaxEndpoints)
	}
	secret := NewSecret()
	e := assistant.WebhookEndpoint{ID: assistant.NewID("we_"), Workspace: workspace, URL: rawURL, EventTypes: slices.Clone(types),
		Enabled: true, CreatedAt: m.Now().UTC(), CreatedBy: actor}
	e.Secret = m.Sealer.Seal(e.ID, secret)
	if err := m.Store.CreateWebhookEndpoint(ctx, e); err != nil {
		return assistant.WebhookEndpoint{}, "", err
	}
	return e, secret, nil
}

// RollSecret gives the endpoint a new secret, at once, and returns it.
func (m *Endpoints) RollSecret(ctx context.Context, workspace, id string) (string, error) {
	if m.Sealer == nil {
		return "", ErrOff
	}
	e, err := m.Store.WebhookEndpoint(ctx, workspace, id)
	if err != nil {
		return "", err
	}
	secret := NewSecret()
	e.Secret = m.Sealer.Seal(e.ID, secret)
	return secret, m.Store.UpdateWebhookEndpoint(ctx, e)
}

// SetEnabled turns the endpoint on or off. While off, events are not
// queued for it, and its pending deliveries wait.
func (m *Endpoints) SetEnabled(ctx context.Context, workspace, id string, on bool) (assistant.WebhookEndpoint, error) {
	e, err := m.Store.WebhookEndpoint(ctx, workspace, id)
	if err != nil {
		return e, err
	}
	e.Enabled = on
	return e, m.Store.UpdateWebhookEndpoint(ctx, e)
}
