package admin

import (
	"net/http"
	"strconv"
)

// AuditPageSize is the number of audit entries on one page of /admin/audit.
const AuditPageSize = 50

// maxAuditPage bounds the page number of /admin/audit.
const maxAuditPage = 100_000

// auditLog shows the workspace's audit log, newest first, AuditPageSize
// entries a page (?page=N, from 1). Only the user's own workspace is shown:
// events without a workspace (e.g. a failed login for an unknown email)
// appear nowhere here.
func (h *Handler) auditLog(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	pageNo := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > maxAuditPage {
			return &pageError{status: http.StatusBadRequest, title: "Invalid page", message: "The page number must be a whole number from 1."}
		}
		pageNo = n
	}
	// One more than a page tells whether there is a next page.
	events, err := h.Store.ListAuditPage(r.Context(), u.Workspace, (pageNo-1)*AuditPageSize, AuditPageSize+1)
	if err != nil {
		return err
	}
	more := len(events) > AuditPageSize
	if more {
		events = events[:AuditPageSize]
	}
	data := map[string]any{"Events": events, "Page": pageNo}
	if pageNo > 1 {
		data["PrevPage"] = pageNo - 1
	}
	if more {
		data["NextPage"] = pageNo + 1
	}
	h.render(w, r, http.StatusOK, "audit", "Audit log", data)
	return nil
}
