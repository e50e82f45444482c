package admin

import (
	"fmt"
	"net/http"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

// rollGraces are the grace periods offered when a key is rolled: how long
// the old key keeps working next to its replacement (0: revoked at once).
var rollGraces = []struct {
	Value string
	Label string
	d     time.Duration
}{
	{"0", "revoke the old key now", 0},
	{"1h", "1 hour", time.Hour},
	{"24h", "24 hours", 24 * time.Hour},
	{"7d", "7 days", 7 * 24 * time.Hour},
}

func (h *Handler) rollForm(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	k, err := h.workspaceKey(r.Context(), u, r.PathValue("id"))
	if err != nil {
		return err
	}
	if k.Status(h.Now()) != "active" {
		return &pageError{status: http.StatusConflict, title: "Key not active", message: "Only an active key can be rolled."}
	}
	h.render(w, r, http.StatusOK, "roll", "Roll key", map[string]any{"Key": k, "Graces": rollGraces})
	return nil
}

// rollKey creates a replacement of an active key (same name; the same
// lifetime from now if the old key had one), shows it once like a new key,
// and makes the old key stop working after the chosen grace period: at
// once (revoked), or by expiring at the end of the grace period.
func (h *Handler) rollKey(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	old, err := h.workspaceKey(ctx, u, r.PathValue("id"))
	if err != nil {
		return err
	}
	now := h.Now().UTC()
	if old.Status(now) != "active" {
		return &pageError{status: http.StatusConflict, title: "Key not active", message: "Only an active key can be rolled."}
	}
	grace := time.Duration(-1)
	for _, g := range rollGraces {
		if g.Value == r.PostFormValue("grace") {
			grace = g.d
		}
	}
	if grace < 0 {
		return &pageError{status: http.StatusBadRequest, title: "Invalid grace period", message: "Choose a grace period from the list."}
	}
	plaintext, id, hash := access.NewKey()
	k := assistant.APIKey{ID: id, Workspace: u.Workspace, Name: old.Name, Hash: hash, CreatedAt: now, CreatedBy: u.Email, RateLimit: old.RateLimit}
	if old.ExpiresAt != nil {
		exp := now.Add(old.ExpiresAt.Sub(old.CreatedAt))
		k.ExpiresAt = &exp
	}
	// One transaction: the new key, the old key's end and the webhook
	// events key.created, key.rolled (and key.revoked).
	upd, err := h.Store.RollKey(ctx, u.Workspace, old.ID, k, now.Add(grace))
	if err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "key.created", id, k.Name+" (replaces "+old.ID+")")
	h.Keys.Forget(id)
	var detail string
	if grace == 0 {
		h.audit(r, u.Workspace, u.Email, "key.revoked", old.ID, old.Name+" (rolled)")
		detail = "revoked now"
	} else {
		detail = "expires " + upd.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	h.Keys.Announce(ctx, old.ID) // revoked, or expiring sooner: on every instance
	h.audit(r, u.Workspace, u.Email, "key.rolled", old.ID, fmt.Sprintf("replaced by %s; old key %s", id, detail))
	h.Sessions.Put(ctx, sessNewKey, h.seal(id, plaintext))
	h.Sessions.Put(ctx, sessNewKeyID, id)
	h.Sessions.Put(ctx, sessFlash, fmt.Sprintf("Key %s is rolled: the old key %s.", old.ID, detail))
	http.Redirect(w, r, "/admin/integrations/keys/"+id+"/created", http.StatusSeeOther)
	return nil
}
