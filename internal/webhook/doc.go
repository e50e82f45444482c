// Package webhook delivers the service's events to the URLs a workspace
// registers, as the Standard Webhooks specification describes
// (https://www.standardwebhooks.com): each request carries webhook-id,
// webhook-timestamp and webhook-signature, an HMAC-SHA256 over
// "id.timestamp.body" with the endpoint's whsec_ secret.
//
// sign.go signs and verifies; seal.go keeps signing secrets encrypted at
// rest (AES-256-GCM under the operator's ASSISTANT_WEBHOOK_KEY);
// guard.go refuses targets on loopback, private and link-local addresses,
// at creation and again at connect time on the resolved address, unless
// the operator allows them; worker.go is the delivery worker: it claims
// due deliveries from the outbox (assistant.WebhookStore), posts them with
// bounded bodies and timeouts, never following redirects, and retries
// failures with exponential backoff and jitter over a bounded period.
//
// It imports the domain only; the store, the clock and the HTTP client's
// TLS settings come from cmd/assistant.
package webhook
