package admin

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
)

// Conversation review of the user's workspace (docs/security.md): the
// setting (off by default; on, turns are kept for a retention period in
// days; turning it off deletes the turns kept), the kept turns newest
// first, one turn in full, and deleting one or all of them.

// ReviewPageSize is the number of kept turns on one page of
// /admin/review.
const ReviewPageSize = 50

// maxReviewPage bounds the page number of /admin/review.
const maxReviewPage = 100_000

// needReviews answers 404 for every review page of a store that keeps no
// review settings, after the login check.
func (h *Handler) needReviews(fn func(http.ResponseWriter, *http.Request, *sessionUser) error) func(http.ResponseWriter, *http.Request, *sessionUser) error {
	return func(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
		if h.Reviews == nil {
			return errReviewsUnavailable
		}
		return fn(w, r, u)
	}
}

var errReviewsUnavailable = &pageError{status: http.StatusNotFound, title: "Not available", message: "This store keeps no review settings."}

// reviewForm shows the setting and, ReviewPageSize a page (?page=N, from
// 1), the turns kept, newest first.
func (h *Handler) reviewForm(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs := h.Reviews
	pageNo := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > maxReviewPage {
			return &pageError{status: http.StatusBadRequest, title: "Invalid page", message: "The page number must be a whole number from 1."}
		}
		pageNo = n
	}
	setting, err := rs.ReviewSetting(r.Context(), u.Workspace)
	if err != nil {
		return err
	}
	days := setting.RetentionDays
	if days == 0 {
		days = assistant.DefaultReviewRetentionDays
	}
	// One more than a page tells whether there is a next page.
	turns, err := rs.Reviews(r.Context(), u.Workspace, h.Now(), (pageNo-1)*ReviewPageSize, ReviewPageSize+1)
	if err != nil {
		return err
	}
	more := len(turns) > ReviewPageSize
	if more {
		turns = turns[:ReviewPageSize]
	}
	rows := make([]reviewRow, len(turns))
	for i, t := range turns {
		rows[i] = reviewRow{Review: t, Excerpt: excerpt(t.Message, 120)}
	}
	data := map[string]any{"Enabled": setting.Enabled, "Days": days, "MaxDays": assistant.MaxReviewRetentionDays,
		"Turns": rows, "Page": pageNo}
	if pageNo > 1 {
		data["PrevPage"] = pageNo - 1
	}
	if more {
		data["NextPage"] = pageNo + 1
	}
	h.render(w, r, http.StatusOK, "review", "Conversation review", data)
	return nil
}

// reviewRow is a line of the list of kept turns.
type reviewRow struct {
	assistant.Review
	Excerpt string // the message's beginning
}

// excerpt is s cut to at most n characters at a word boundary, with "…"
// when cut.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

func (h *Handler) setReview(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs := h.Reviews
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
	flash := "Conversation review is " + state + "."
	if !setting.Enabled {
		flash += " Any turns kept were deleted."
	}
	h.Sessions.Put(r.Context(), sessFlash, flash)
	http.Redirect(w, r, "/admin/review", http.StatusSeeOther)
	return nil
}

// reviewedTurn shows one kept turn in full: the message, the answer with
// its citations marked, the trace, the knowledge used and the verdicts.
func (h *Handler) reviewedTurn(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs := h.Reviews
	t, err := rs.Review(r.Context(), u.Workspace, r.PathValue("id"), h.Now())
	if assistant.ErrorCode(err) == assistant.ENotFound {
		return &pageError{status: http.StatusNotFound, title: "Not found", message: "There is no such kept turn: it was deleted or its period ended."}
	}
	if err != nil {
		return err
	}
	// The JSON was written by chat.ReviewOf from a chat.Response.
	var resp chat.Response
	if err := json.Unmarshal(t.Trace, &resp.ReasoningTrace); err != nil {
		return fmt.Errorf("reading the trace of %s: %w", t.ID, err)
	}
	if err := json.Unmarshal(t.Knowledge, &resp.RagHits); err != nil {
		return fmt.Errorf("reading the knowledge of %s: %w", t.ID, err)
	}
	if err := json.Unmarshal(t.Verdicts, &resp.Confidence); err != nil {
		return fmt.Errorf("reading the verdicts of %s: %w", t.ID, err)
	}
	titles := map[string]string{}
	for _, hit := range resp.RagHits {
		titles[hit.Source] = hit.Title
	}
	h.render(w, r, http.StatusOK, "review-turn", "Kept turn", map[string]any{
		"Turn": t, "Answer": markCitations(t.Answer, titles), "Trace": resp.ReasoningTrace,
		"Knowledge": resp.RagHits, "Confidence": resp.Confidence})
	return nil
}

// citationToken matches a citation token in an answer, [type:slug].
var citationToken = regexp.MustCompile(`\[([a-z][a-z-]*:[a-z0-9][a-z0-9-]*)\]`)

// markCitations is the answer's text, escaped, with each citation token
// marked and titled with its entity's title when the turn's knowledge
// names it.
func markCitations(answer string, titles map[string]string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range citationToken.FindAllStringSubmatchIndex(answer, -1) {
		b.WriteString(template.HTMLEscapeString(answer[last:m[0]]))
		token := answer[m[2]:m[3]]
		title := titles[token]
		if title == "" {
			title = token
		}
		fmt.Fprintf(&b, `<mark class="citation" title="%s">%s</mark>`, template.HTMLEscapeString(title), template.HTMLEscapeString(answer[m[0]:m[1]]))
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(answer[last:]))
	return template.HTML(b.String())
}

// deleteReviewedTurn deletes one kept turn.
func (h *Handler) deleteReviewedTurn(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs := h.Reviews
	id := r.PathValue("id")
	if err := rs.DeleteReview(r.Context(), u.Workspace, id); err != nil {
		if assistant.ErrorCode(err) == assistant.ENotFound {
			return &pageError{status: http.StatusNotFound, title: "Not found", message: "There is no such kept turn: it was deleted or its period ended."}
		}
		return err
	}
	h.audit(r, u.Workspace, u.Email, "review.deleted", id, "")
	h.Sessions.Put(r.Context(), sessFlash, "The turn was deleted.")
	http.Redirect(w, r, "/admin/review", http.StatusSeeOther)
	return nil
}

// deleteReviewedTurns deletes every kept turn of the workspace; the form
// asks for a confirmation box to be ticked.
func (h *Handler) deleteReviewedTurns(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	rs := h.Reviews
	if r.PostFormValue("confirm") != "on" {
		return &pageError{status: http.StatusBadRequest, title: "Not confirmed", message: "Tick the box to confirm that every kept turn is to be deleted."}
	}
	n, err := rs.DeleteReviews(r.Context(), u.Workspace)
	if err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "review.deleted_all", u.Workspace, fmt.Sprintf("%d turns", n))
	h.Sessions.Put(r.Context(), sessFlash, fmt.Sprintf("%d kept turn(s) deleted.", n))
	http.Redirect(w, r, "/admin/review", http.StatusSeeOther)
	return nil
}
