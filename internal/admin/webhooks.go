package admin

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/webhook"
)

// The webhooks page (/admin/webhooks): a workspace's endpoints (create,
// roll the secret, turn on or off, delete) and the delivery log with a
// manual resend. Every change is in the audit log. A new or rolled
// secret is shown once, like a new key: sealed in the session for one
// page view.

// Session keys of a secret just made.
const (
	sessNewSecret   = "new_webhook_secret"
	sessNewSecretID = "new_webhook_id"
)

// webhookDeliveriesShown is the length of the delivery log on the page.
const webhookDeliveriesShown = 100

func (h *Handler) addWebhookRoutes(mux *http.ServeMux) {
	route := func(pattern string, fn func(http.ResponseWriter, *http.Request, *sessionUser) error) {
		mux.Handle(pattern, h.page(h.requireUser(h.needWebhooks(fn))))
	}
	route("GET /admin/webhooks", h.webhooksPage)
	route("POST /admin/webhooks", h.createWebhook)
	route("GET /admin/webhooks/{id}/secret", h.webhookSecret)
	route("POST /admin/webhooks/{id}/roll", h.rollWebhookSecret)
	route("POST /admin/webhooks/{id}/enable", h.enableWebhook(true))
	route("POST /admin/webhooks/{id}/disable", h.enableWebhook(false))
	route("POST /admin/webhooks/{id}/delete", h.deleteWebhook)
	route("POST /admin/webhooks/deliveries/{id}/resend", h.resendDelivery)
}

// needWebhooks answers 404 for every webhook page of a deployment that
// offers none (Handler.Webhooks unset), after the login check.
func (h *Handler) needWebhooks(fn func(http.ResponseWriter, *http.Request, *sessionUser) error) func(http.ResponseWriter, *http.Request, *sessionUser) error {
	return func(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
		if h.Webhooks == nil {
			return errWebhooksUnavailable
		}
		return fn(w, r, u)
	}
}

var errWebhooksUnavailable = &pageError{status: http.StatusNotFound, title: "Not available", message: "Webhooks are not available in this deployment."}

func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	return h.showWebhooks(w, r, u, http.StatusOK, "", "", nil)
}

// showWebhooks renders the page, with an error and the form's values
// when a creation was refused.
func (h *Handler) showWebhooks(w http.ResponseWriter, r *http.Request, u *sessionUser, status int, formErr, formURL string, formTypes []string) error {
	ctx := r.Context()
	eps, err := h.Webhooks.Store.WebhookEndpoints(ctx, u.Workspace)
	if err != nil {
		return err
	}
	endpoint := r.URL.Query().Get("endpoint")
	ds, err := h.Webhooks.Store.Deliveries(ctx, u.Workspace, endpoint, webhookDeliveriesShown)
	if err != nil {
		return err
	}
	checked := map[string]bool{}
	for _, t := range formTypes {
		checked[t] = true
	}
	if formTypes == nil {
		for _, t := range assistant.EventTypes {
			checked[t] = true
		}
	}
	data := map[string]any{"Endpoints": eps, "Deliveries": ds, "EventTypes": assistant.EventTypes, "Checked": checked,
		"Off": h.Webhooks.Sealer == nil, "FormURL": formURL, "Endpoint": endpoint}
	if formErr != "" {
		data["Error"] = formErr
	}
	h.render(w, r, status, "webhooks", "Webhooks", data)
	return nil
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	url := strings.TrimSpace(r.PostFormValue("url"))
	types, err := webhook.ParseEventTypes(r.PostForm["events"]...)
	if err == nil && len(r.PostForm["events"]) == 0 {
		types = nil // none ticked: refused below, not "all"
	}
	var ep assistant.WebhookEndpoint
	var secret string
	if err == nil {
		ep, secret, err = h.Webhooks.Create(ctx, u.Workspace, url, types, u.Email)
	}
	if err != nil {
		if code := assistant.ErrorCode(err); code == assistant.EInvalid || code == assistant.EConflict {
			return h.showWebhooks(w, r, u, http.StatusBadRequest, assistant.ErrorMessage(err), url, types)
		}
		return err
	}
	h.audit(r, u.Workspace, u.Email, "webhook.created", ep.ID, ep.URL+" ("+strings.Join(ep.EventTypes, ", ")+")")
	h.showSecretOnce(w, r, ep.ID, secret)
	return nil
}

// showSecretOnce keeps the secret, sealed, in the session for one view of
// its page and goes there.
func (h *Handler) showSecretOnce(w http.ResponseWriter, r *http.Request, id, secret string) {
	h.Sessions.Put(r.Context(), sessNewSecret, h.seal(id, secret))
	h.Sessions.Put(r.Context(), sessNewSecretID, id)
	http.Redirect(w, r, "/admin/webhooks/"+id+"/secret", http.StatusSeeOther)
}

func (h *Handler) webhookSecret(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	ep, err := h.Webhooks.Store.WebhookEndpoint(ctx, u.Workspace, r.PathValue("id"))
	if err != nil {
		return err
	}
	data := map[string]any{"Endpoint": ep}
	if h.Sessions.GetString(ctx, sessNewSecretID) == ep.ID {
		if secret, ok := h.unseal(ep.ID, h.Sessions.PopString(ctx, sessNewSecret)); ok {
			data["Secret"] = secret
		}
		h.Sessions.Remove(ctx, sessNewSecretID)
	}
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, http.StatusOK, "webhook-secret", "Signing secret", data)
	return nil
}

func (h *Handler) rollWebhookSecret(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	id := r.PathValue("id")
	secret, err := h.Webhooks.RollSecret(r.Context(), u.Workspace, id)
	if err != nil {
		if assistant.ErrorCode(err) == assistant.EConflict {
			return &pageError{status: http.StatusConflict, title: "Webhooks are off", message: assistant.ErrorMessage(err)}
		}
		return err
	}
	h.audit(r, u.Workspace, u.Email, "webhook.secret_rolled", id, "")
	h.showSecretOnce(w, r, id, secret)
	return nil
}

func (h *Handler) enableWebhook(on bool) func(http.ResponseWriter, *http.Request, *sessionUser) error {
	return func(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
		ep, err := h.Webhooks.SetEnabled(r.Context(), u.Workspace, r.PathValue("id"), on)
		if err != nil {
			return err
		}
		action, word := "webhook.enabled", "on"
		if !on {
			action, word = "webhook.disabled", "off"
		}
		h.audit(r, u.Workspace, u.Email, action, ep.ID, ep.URL)
		h.Sessions.Put(r.Context(), sessFlash, "Endpoint "+ep.ID+" is "+word+".")
		http.Redirect(w, r, "/admin/webhooks", http.StatusSeeOther)
		return nil
	}
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	ep, err := h.Webhooks.Store.WebhookEndpoint(ctx, u.Workspace, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := h.Webhooks.Store.DeleteWebhookEndpoint(ctx, u.Workspace, ep.ID); err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "webhook.deleted", ep.ID, ep.URL)
	h.Sessions.Put(ctx, sessFlash, "Endpoint "+ep.ID+" and its delivery log are deleted.")
	http.Redirect(w, r, "/admin/webhooks", http.StatusSeeOther)
	return nil
}

func (h *Handler) resendDelivery(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	if err := h.Webhooks.Store.ResendDelivery(r.Context(), u.Workspace, id, h.Now()); err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "webhook.resent", strconv.FormatInt(id, 10), "")
	h.Sessions.Put(r.Context(), sessFlash, "Delivery "+strconv.FormatInt(id, 10)+" will be sent again within a few seconds.")
	http.Redirect(w, r, "/admin/webhooks", http.StatusSeeOther)
	return nil
}
