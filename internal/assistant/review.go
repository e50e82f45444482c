package assistant

import (
	"context"
	"time"
)

// Conversation review is an opt-in of a workspace: while it is on, its
// chat turns are kept (the message, the answer, the trace and the
// verdicts) for the workspace's retention period, for people to read in
// the admin area; while it is off, which is the default, no message
// text is stored anywhere, and turning it off deletes the turns kept
// (docs/security.md).

// Bounds of a review setting's retention period, in days.
const (
	DefaultReviewRetentionDays = 30
	MaxReviewRetentionDays     = 365
)

// ReviewSetting is a workspace's conversation-review setting. The zero
// value is review off.
type ReviewSetting struct {
	Enabled bool
	// RetentionDays is how long a kept turn stays, 1 to
	// MaxReviewRetentionDays when Enabled.
	RetentionDays int
}

// Valid reports whether s can be stored.
func (s ReviewSetting) Valid() bool {
	if !s.Enabled {
		return s.RetentionDays >= 0 && s.RetentionDays <= MaxReviewRetentionDays
	}
	return s.RetentionDays >= 1 && s.RetentionDays <= MaxReviewRetentionDays
}

// ReviewSettings reads and writes the workspaces' review settings. It
// is the port every path that may keep a turn reads first (the
// synchronous chat surfaces and asynchronous turns alike).
type ReviewSettings interface {
	// ReviewSetting returns the workspace's setting; a workspace that
	// never set one, or does not exist, has review off (no error).
	ReviewSetting(ctx context.Context, workspace string) (ReviewSetting, error)
	// SetReviewSetting stores the workspace's setting at time at. An
	// invalid setting is EInvalid; a workspace that does not exist is
	// ENotFound. A store that keeps turns (ReviewStore) applies it to
	// them in the same transaction.
	SetReviewSetting(ctx context.Context, workspace string, s ReviewSetting, at time.Time) error
}

// Review is one chat turn kept for conversation review: what was asked,
// what was answered and how, never the API key itself.
type Review struct {
	ID        string // "rev_" + 24 base62 characters
	Workspace string
	At        time.Time
	// ExpiresAt is At plus the workspace's retention period; the store
	// sets it (KeepReview) and moves it when the period changes.
	ExpiresAt time.Time
	// KeyID is the id of the API key that ran the turn ("" for the
	// admin area's playground).
	KeyID string
	// Surface names where the turn ran: the route or MCP method of the
	// API ("POST /api/v1/chat", "mcp tools/call ask_assistant", ...),
	// ReviewSurfaceAsync or ReviewSurfacePlayground.
	Surface string
	Mode    string
	// Level is the confidence level of the answer.
	Level   string
	Message string
	// History is how many earlier turns the request carried (their
	// text is not kept).
	History int
	// Answer is the answer's text, with its citation tokens.
	Answer string
	// Trace, Knowledge and Verdicts are JSON: the reasoning trace (the
	// tool calls), the knowledge items used (the rag hits) and the
	// confidence object with its claims and verdicts, as the chat
	// response carries them.
	Trace     []byte
	Knowledge []byte
	Verdicts  []byte
}

// JSONColumns returns Trace, Knowledge and Verdicts as the text the stores
// keep, each the empty JSON value of its kind ("[]", "[]", "{}") when it
// is empty.
func (r Review) JSONColumns() (trace, knowledge, verdicts string) {
	text := func(b []byte, empty string) string {
		if len(b) == 0 {
			return empty
		}
		return string(b)
	}
	return text(r.Trace, "[]"), text(r.Knowledge, "[]"), text(r.Verdicts, "{}")
}

// Surfaces of turns that have no API route.
const (
	ReviewSurfaceAsync      = "async"
	ReviewSurfacePlayground = "playground"
)

// ReviewStore keeps the turns of workspaces that have review on, each
// until its expiry. Implementations: internal/sqlite and
// internal/postgres, held to internal/storetest.
//
// Its SetReviewSetting (ReviewSettings) also applies the setting to the
// turns already kept: turning review off deletes every kept turn of the
// workspace in the same transaction, and a new retention period moves
// the expiry of those kept to their time plus the new period.
type ReviewStore interface {
	ReviewSettings
	// KeepReview stores r (its ID, At and the rest filled by the caller)
	// if r.Workspace has review on, with ExpiresAt r.At plus the
	// workspace's retention period, and reports whether it stored it.
	// It is atomic with SetReviewSetting: a turn kept while review is
	// turned off is either refused or deleted with the others.
	KeepReview(ctx context.Context, r Review) (bool, error)
	// Reviews returns the workspace's kept turns that have not expired at
	// now, newest first (by At, then ID), skipping offset and at most
	// limit of them. Trace, Knowledge and Verdicts are left empty.
	Reviews(ctx context.Context, workspace string, now time.Time, offset, limit int) ([]Review, error)
	// Review returns one kept turn of the workspace in full; one that
	// expired at now, or does not exist, is ENotFound.
	Review(ctx context.Context, workspace, id string, now time.Time) (Review, error)
	// DeleteReview deletes one kept turn of the workspace (ENotFound).
	DeleteReview(ctx context.Context, workspace, id string) error
	// DeleteReviews deletes every kept turn of the workspace, returning
	// how many went.
	DeleteReviews(ctx context.Context, workspace string) (int, error)
	// PurgeReviews deletes every kept turn, of every workspace, that
	// expired at now (ExpiresAt not after now), returning how many went.
	PurgeReviews(ctx context.Context, now time.Time) (int, error)
}
