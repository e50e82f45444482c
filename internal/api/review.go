package api

import (
	"context"

	"github.com/constraintlab/assistant/internal/chat"
)

// keepForReview keeps a turn that succeeded when its workspace has
// conversation review on (Server.Reviews; docs/security.md). A failure is
// logged and the turn answered anyway: review is a record for the
// workspace's people, not part of the answer.
func (s *Server) keepForReview(ctx context.Context, req chat.Request, resp chat.Response, keyID, surface string) {
	if s.Reviews == nil {
		return
	}
	_, err := chat.KeepForReview(context.WithoutCancel(ctx), s.Reviews, req, resp, chat.ReviewedTurn{KeyID: keyID, Surface: surface, At: s.Now()})
	if err != nil {
		s.Logger.ErrorContext(ctx, "keeping the turn for review failed", "request_id", RequestIDFrom(ctx), "err", err)
	}
}

// reviewSurface names the surface of the request's turn for review: its
// usage row's endpoint (the route, or the MCP method and tool).
func reviewSurface(ctx context.Context) string {
	if u := usageFrom(ctx); u != nil {
		return u.endpoint
	}
	return ""
}
