package assistant

import (
	"context"
	"time"
)

// Conversation review is an opt-in of a workspace: while it is on, its
// chat turns are kept (the message, the answer, the trace and the
// verdicts) for the workspace's retention period, for people to read in
// the admin area; while it is off, which is the default, no message
// text is stored anywhere (docs/security.md).

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
	// ENotFound.
	SetReviewSetting(ctx context.Context, workspace string, s ReviewSetting, at time.Time) error
}
