package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ReviewedTurn says who ran a turn and where, for KeepForReview.
type ReviewedTurn struct {
	// KeyID is the id of the API key that ran the turn ("" for the admin
	// area's playground); never the key.
	KeyID string
	// Surface names where it ran (assistant.Review.Surface).
	Surface string
	At      time.Time
}

// KeepForReview keeps a turn that succeeded for conversation review when
// its workspace has review on (docs/security.md): the message, how many
// earlier turns came with it, the mode, the answer, the trace, the
// knowledge used and the confidence with its verdicts. With review off it
// stores nothing and builds nothing; store nil keeps nothing. It reports
// whether the turn was kept.
func KeepForReview(ctx context.Context, store assistant.ReviewStore, req Request, resp Response, t ReviewedTurn) (bool, error) {
	if store == nil || req.Workspace == "" {
		return false, nil
	}
	setting, err := store.ReviewSetting(ctx, req.Workspace)
	if err != nil || !setting.Enabled {
		return false, err
	}
	return store.KeepReview(ctx, ReviewOf(req, resp, t))
}

// ReviewOf is the turn as conversation review keeps it, under a new id.
func ReviewOf(req Request, resp Response, t ReviewedTurn) assistant.Review {
	trace, _ := json.Marshal(nonNil(resp.ReasoningTrace))
	knowledge, _ := json.Marshal(nonNil(resp.RagHits))
	verdicts, _ := json.Marshal(resp.Confidence)
	return assistant.Review{ID: assistant.NewID("rev_"), Workspace: req.Workspace, At: t.At.UTC(), KeyID: t.KeyID,
		Surface: t.Surface, Mode: req.Mode, Level: resp.Confidence.Level, Message: req.Message, History: len(req.History),
		Answer: resp.Response, Trace: trace, Knowledge: knowledge, Verdicts: verdicts}
}

// nonNil makes a nil list an empty one, so it is kept as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
