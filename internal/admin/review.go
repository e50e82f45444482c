package admin

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The conversation-review setting of the user's workspace: off by
// default; on, it keeps turns for a retention period in days
// (docs/security.md).

func (h *Handler) reviewSettings() (assistant.ReviewSettings, error) {
	if h.Reviews == nil {
		return nil, &pageError{status: http.StatusNotFound, title: "Not available", message: "This store keeps no review settings."}
	}
	return h.Reviews, nil
}

func (h *Handler) reviewForm(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs, err := h.reviewSettings()
	if err != nil {
		return err
	}
	setting, err := rs.ReviewSetting(r.Context(), u.Workspace)
	if err != nil {
		return err
	}
	days := setting.RetentionDays
	if days == 0 {
		days = assistant.DefaultReviewRetentionDays
	}
	h.render(w, r, http.StatusOK, "review", "Conversation review", map[string]any{
		"Enabled": setting.Enabled, "Days": days, "MaxDays": assistant.MaxReviewRetentionDays})
	return nil
}

func (h *Handler) setReview(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs, err := h.reviewSettings()
	if err != nil {
		return err
	}
	setting := assistant.ReviewSetting{Enabled: r.PostFormValue("enabled") == "on"}
	days, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("days")))
	if err != nil || days < 1 || days > assistant.MaxReviewRetentionDays {
		return &pageError{status: http.StatusBadRequest, title: "Invalid retention",
			message: fmt.Sprintf("Keep turns for a whole number of days, from 1 to %d.", assistant.MaxReviewRetentionDays)}
	}
	setting.RetentionDays = days
	if err := rs.SetReviewSetting(r.Context(), u.Workspace, setting, h.Now().UTC()); err != nil {
		return err
	}
	state := "off"
	if setting.Enabled {
		state = fmt.Sprintf("on, %d days", days)
	}
	h.audit(r, u.Workspace, u.Email, "review.changed", u.Workspace, state)
	h.Sessions.Put(r.Context(), sessFlash, "Conversation review is "+state+".")
	http.Redirect(w, r, "/admin/review", http.StatusSeeOther)
	return nil
}
