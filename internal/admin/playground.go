package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"slices"
	"strings"
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
	// PlaygroundMaxBytes bounds the JSON body of POST /admin/playground/chat:
	// 51 texts of 8000 characters of up to 4 bytes each, with room for
	// JSON escapes.
	PlaygroundMaxBytes = 4 << 20
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
// The turn is recorded like an API turn (usage row and citation events in
// one transaction) with source "playground" and no key id, so it counts
// against no API key's rate limit and shows on no key's usage page.
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
		writeJSON(w, http.StatusRequestEntityTooLarge, playgroundError{fmt.Sprintf("The request is larger than %d MiB.", PlaygroundMaxBytes>>20)})
		return
	}
	var in playgroundRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, PlaygroundMaxBytes))
	if err := dec.Decode(&in); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestEntityTooLarge, playgroundError{fmt.Sprintf("The request is larger than %d MiB.", PlaygroundMaxBytes>>20)})
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
	start := h.Now()
	req := chat.Request{Message: message, History: in.History, Mode: in.Mode, Vertical: in.Vertical,
		Source: PlaygroundSource, Workspace: u.Workspace}
	resp, citations, err := h.Chat.Run(ctx, req, nil)
	if err == nil {
		rec := assistant.UsageRecord{At: start, Workspace: u.Workspace, Endpoint: "POST " + playgroundChatPath,
			Mode: in.Mode, Source: PlaygroundSource, Status: http.StatusOK, Latency: h.Now().Sub(start)}
		if rerr := h.Store.RecordTurn(context.WithoutCancel(ctx), rec, citations); rerr != nil {
			err = fmt.Errorf("recording the playground turn: %w", rerr)
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
