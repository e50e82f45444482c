package admin

import (
	"net/http"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// workspaceUsage shows the requests per day of all the workspace's keys
// over UsageWindow, by status class and by source.
func (h *Handler) workspaceUsage(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	since := h.Now().UTC().Add(-UsageWindow).Truncate(24 * time.Hour)
	rows, err := h.Store.WorkspaceUsageByDay(r.Context(), u.Workspace, since)
	if err != nil {
		return err
	}
	byStatus, classes := pivot(rows, func(d assistant.UsageDay) string { return d.StatusClass })
	bySource, sources := pivot(rows, func(d assistant.UsageDay) string { return d.Source })
	h.render(w, r, http.StatusOK, "workspace-usage", "Workspace usage", map[string]any{
		"Since": since.Format("2006-01-02"),
		"Days":  byStatus, "Classes": classes, "SourceDays": bySource, "Sources": sources,
	})
	return nil
}
