package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
)

// ChatRunner runs one chat turn: *chat.Service, the same service the
// API's POST /api/v1/chat uses.
type ChatRunner interface {
	Run(ctx context.Context, req chat.Request, events chat.Events) (chat.Response, []assistant.CitationEvent, error)
}

// Limits of the playground, the same as the API's chat (D4).
const (
	PlaygroundMaxMessage = 8000
	PlaygroundMaxHistory = 50
	// PlaygroundMaxBytes bounds the JSON body of POST /admin/playground/chat
	// as the API bounds its bodies: exactly 256 KiB is accepted.
	PlaygroundMaxBytes = 256 << 10
	// PlaygroundDefaultLimit is the playground's turns per admin account
	// and workspace a minute when no limiter is given (the API chat's
	// default; serve gives the configured chat limit).
	PlaygroundDefaultLimit = 60
	// PlaygroundSource labels the playground's turns in usage and
	// citation events.
	PlaygroundSource   = "playground"
	playgroundChatPath = "/admin/playground/chat"
)

// addPlaygroundPage parses the playground page next to the others.
func (h *Handler) addPlaygroundPage() error {
	t, err := template.New("playground").ParseFS(templateFS, "templates/layout.html", "templates/playground.html")
	if err != nil {
		return fmt.Errorf("parsing admin template playground: %w", err)
	}
	h.pages["playground"] = t
	return nil
}

// formsOrJSON sends the playground's JSON endpoint past formsOnly (which
// accepts only url-encoded forms): it reads its own bounded JSON body.
// Everything else goes through formsOnly. Both stay behind the
// cross-origin protection and the session.
func (h *Handler) formsOrJSON(mux http.Handler) http.Handler {
	forms := h.formsOnly(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == playgroundChatPath {
			mux.ServeHTTP(w, r)
			return
		}
		forms.ServeHTTP(w, r)
	})
}

func (h *Handler) playground(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	h.render(w, r, http.StatusOK, "playground", "Playground", map[string]any{
		"Modes": chat.Modes, "Verticals": assistant.VerticalIDs, "Available": h.Chat != nil,
	})
	return nil
}

type playgroundRequest struct {
	Message  string             `json:"message"`
	History  []chat.HistoryItem `json:"history"`
	Mode     string             `json:"mode"`
	Vertical string             `json:"vertical"`
}

// playgroundError is the JSON body of a refused or failed playground turn.
type playgroundError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// checkPlayground validates a playground turn with the API's rules (D4,
// D28) and returns the trimmed message, or the reason it is refused.
func checkPlayground(in *playgroundRequest) (message, refused string) {
	m := strings.TrimSpace(in.Message)
	switch {
	case m == "":
		return "", "Type a message."
	case utf8.RuneCountInString(m) > PlaygroundMaxMessage:
		return "", fmt.Sprintf("The message is %d characters; at most %d are allowed.", utf8.RuneCountInString(m), PlaygroundMaxMessage)
	case len(in.History) > PlaygroundMaxHistory:
		return "", fmt.Sprintf("The conversation has %d earlier turns; at most %d are sent. Start a new conversation.", len(in.History), PlaygroundMaxHistory)
	}
	if in.Mode == "" {
		in.Mode = chat.Modes[0]
	}
	if !slices.Contains(chat.Modes, in.Mode) {
		return "", fmt.Sprintf("Unknown mode %q. Allowed values: %s.", in.Mode, strings.Join(chat.Modes, ", "))
	}
	if in.Vertical != "" {
		if err := assistant.CheckVertical(in.Vertical); err != nil {
			return "", assistant.ErrorMessage(err)
		}
	}
	for i, item := range in.History {
		if item.Role != "user" && item.Role != "assistant" {
			return "", fmt.Sprintf("History item %d has role %q; use user or assistant.", i, item.Role)
		}
		if utf8.RuneCountInString(item.Content) > PlaygroundMaxMessage {
			return "", fmt.Sprintf("History item %d is longer than %d characters.", i, PlaygroundMaxMessage)
		}
	}
	return m, ""
}

// playgroundChat answers POST /admin/playground/chat: one chat turn for
// the admin's workspace through the API's chat service, JSON in and out.
// The turn counts in the playground's own window per admin account and
// workspace, and is recorded with a usage row of source "playground" and
// no key id (so it shows on no key's usage page) but no citation events:
// the public leaderboard counts the knowledge integrations use, not the
// admins' trials.
func (h *Handler) playgroundChat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	u := h.currentUser(r)
	if u == nil {
		writeJSON(w, http.StatusUnauthorized, playgroundError{"Your session has ended. Log in again."})
		return
	}
	if h.Chat == nil {
		writeJSON(w, http.StatusServiceUnavailable, playgroundError{"The chat service is not configured in this process."})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, playgroundError{"Send the turn as application/json."})
		return
	}
	if r.ContentLength > PlaygroundMaxBytes {
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestEntityTooLarge, playgroundError{fmt.Sprintf("The request is larger than %d bytes (256 KiB).", PlaygroundMaxBytes)})
		return
	}
	var in playgroundRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, PlaygroundMaxBytes))
	if err := dec.Decode(&in); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestEntityTooLarge, playgroundError{fmt.Sprintf("The request is larger than %d bytes (256 KiB).", PlaygroundMaxBytes)})
			return
		}
		writeJSON(w, http.StatusBadRequest, playgroundError{"The request is not valid JSON: " + err.Error()})
		return
	}
	message, refused := checkPlayground(&in)
	if refused != "" {
		writeJSON(w, http.StatusBadRequest, playgroundError{refused})
		return
	}
	if !h.admitPlayground(w, r, u) {
		return
	}
	start := h.Now()
	req := chat.Request{Message: message, History: in.History, Mode: in.Mode, Vertical: in.Vertical,
		Source: PlaygroundSource, Workspace: u.Workspace}
	resp, _, err := h.Chat.Run(ctx, req, nil)
	if err == nil {
		// Its citations stay out of the public leaderboard: trying the
		// assistant out is not a use of the knowledge. The usage row stays.
		rec := assistant.UsageRecord{At: start, Workspace: u.Workspace, Endpoint: "POST " + playgroundChatPath,
			Mode: in.Mode, Source: PlaygroundSource, Status: http.StatusOK, Latency: h.Now().Sub(start)}
		if rerr := h.Store.RecordUsage(context.WithoutCancel(ctx), rec); rerr != nil {
			err = fmt.Errorf("recording the playground turn: %w", rerr)
		}
		if err == nil {
			if _, rerr := chat.KeepForReview(context.WithoutCancel(ctx), h.Reviews, req, resp,
				chat.ReviewedTurn{Surface: assistant.ReviewSurfacePlayground, At: start}); rerr != nil {
				h.Logger.ErrorContext(ctx, "keeping the playground turn for review failed", "err", rerr)
			}
		}
	}
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, resp)
	case errors.Is(err, chat.ErrUpstream):
		h.Logger.WarnContext(ctx, "model provider unavailable (playground)", "err", err)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusBadGateway, playgroundError{"The model provider is unavailable. Try again in a moment."})
	case assistant.ErrorCode(err) == assistant.EInvalid:
		writeJSON(w, http.StatusBadRequest, playgroundError{assistant.ErrorMessage(err)})
	case errors.Is(err, context.Canceled):
		writeJSON(w, 499, playgroundError{"The request was cancelled."})
	default:
		h.Logger.ErrorContext(ctx, "playground turn failed", "err", err)
		writeJSON(w, http.StatusInternalServerError, playgroundError{"The turn failed. Try again in a moment."})
	}
}

// admitPlayground counts a turn in the window of the admin account and
// workspace, or answers 429 with Retry-After. A limiter that cannot decide
// admits (fail open) and says so in the log.
func (h *Handler) admitPlayground(w http.ResponseWriter, r *http.Request, u *sessionUser) bool {
	if h.PlaygroundLimit <= 0 {
		return true
	}
	d, err := h.PlaygroundLimiter.Allow(r.Context(), playgroundWindowKey(u))
	if err != nil {
		h.Logger.WarnContext(r.Context(), "playground limiter failed; admitting", "err", err)
		return true
	}
	if d.Allowed {
		return true
	}
	secs := max(1, int((d.RetryAfter+time.Second-1)/time.Second))
	window := max(1, int(h.PlaygroundWindow/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, playgroundError{fmt.Sprintf(
		"You sent %d turns in the last %d seconds, the playground's limit. Try again in %d seconds.", h.PlaygroundLimit, window, secs)})
	return false
}

// playgroundWindowKey names the window of an admin account in a workspace:
// the workspace and a hash of the email, which is never stored in the
// limiter (with Redis, the key is visible there).
func playgroundWindowKey(u *sessionUser) string {
	sum := sha256.Sum256([]byte(strings.ToLower(u.Email)))
	return "playground:" + u.Workspace + ":" + hex.EncodeToString(sum[:12])
}
