package admin

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

func (h *Handler) passwordForm(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	h.render(w, r, http.StatusOK, "password", "Change password", map[string]any{"MinPassword": access.MinPasswordLength})
	return nil
}

// changePassword checks the current password (limited like a login: per
// address, and through the login throttle of the account), stores the new
// one as argon2id, renews this session's token and ends every other
// session of the user.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	if err := h.limitAttempts(r); err != nil {
		return err
	}
	current, password, confirm := r.PostFormValue("current"), r.PostFormValue("password"), r.PostFormValue("confirm")
	again := func(status int, msg string) error {
		h.render(w, r, status, "password", "Change password", map[string]any{"MinPassword": access.MinPasswordLength, "Error": msg})
		return nil
	}
	switch {
	case current == "" || password == "":
		return again(http.StatusBadRequest, "Enter your current password and the new one twice.")
	case password != confirm:
		return again(http.StatusBadRequest, "The two new passwords differ.")
	}
	if err := access.CheckPasswordPolicy(password); err != nil {
		return again(http.StatusBadRequest, assistant.ErrorMessage(err))
	}
	attempt, retry := h.Throttle.Begin(ctx, u.Email, addressKey(h.ClientIP(r)))
	if attempt == nil {
		w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(retry)))
		return again(http.StatusTooManyRequests, fmt.Sprintf(
			"Too many wrong passwords for this account from your address. Try again in %d minute(s).", int((retry+time.Minute-1)/time.Minute)))
	}
	user, err := h.Store.UserByEmail(ctx, u.Email)
	if err != nil {
		attempt.Cancel()
		return err
	}
	var match bool
	var hash string
	if herr := h.Hashes.Do(ctx, func() {
		if match = access.CheckPassword(user.PasswordHash, current); match {
			hash = access.HashPassword(password)
		}
	}); herr != nil {
		attempt.Cancel()
		return errBusy
	}
	if !match {
		attempt.Fail()
		h.audit(r, u.Workspace, u.Email, "password.change_failed", u.Email, "wrong current password")
		return again(http.StatusUnauthorized, "The current password is wrong.")
	}
	attempt.Succeed()
	if err := h.Store.SetPasswordHash(ctx, u.Email, hash); err != nil {
		return err
	}
	ended, err := h.endOtherSessions(ctx, u.Email)
	if err != nil {
		h.Logger.ErrorContext(ctx, "ending the other sessions after a password change failed", "err", err)
	}
	if err := h.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "password.changed", u.Email, fmt.Sprintf("%d other session(s) ended", ended))
	h.Sessions.Put(ctx, sessFlash, "Your password is changed. Your other sessions are logged out.")
	http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
	return nil
}

// endOtherSessions destroys every stored session of email except the
// request's own, and returns how many it ended. A session store that cannot
// list its sessions ends none.
func (h *Handler) endOtherSessions(ctx context.Context, email string) (int, error) {
	switch h.Sessions.Store.(type) {
	case scs.IterableStore, scs.IterableCtxStore:
	default:
		return 0, fmt.Errorf("the session store cannot list sessions")
	}
	own := h.Sessions.Token(ctx)
	n := 0
	err := h.Sessions.Iterate(ctx, func(ctx context.Context) error {
		if h.Sessions.Token(ctx) == own || h.Sessions.GetString(ctx, sessUserEmail) != email {
			return nil
		}
		n++
		return h.Sessions.Destroy(ctx)
	})
	return n, err
}
