package assistant

import (
	"context"
	"regexp"
	"time"
)

// WorkspaceIDPattern is what a workspace id looks like: it appears in
// command lines and URLs, so it is a short slug.
var workspaceIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidWorkspaceID reports whether id is a well-formed workspace id.
func ValidWorkspaceID(id string) bool { return workspaceIDPattern.MatchString(id) }

// DefaultWorkspace is the workspace the first admin user belongs to.
const DefaultWorkspace = "default"

// APIKey is a stored API key (D16). The plaintext is never stored: only
// its id (public) and the SHA-256 of the whole key.
type APIKey struct {
	ID         string // 12 base62 characters, the public part
	Workspace  string
	Name       string
	Hash       [32]byte // SHA-256 of the whole plaintext key
	CreatedAt  time.Time
	CreatedBy  string // who created it: an admin's email, or "cli"
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	// RateLimit is the key's own limit of requests per rolling window
	// (chat, verify, the completions and MCP's tool calls); 0 means the
	// service's default. Set when the key is created.
	RateLimit int
}

// Status is "active", "revoked" or "expired" at time now.
func (k *APIKey) Status(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	}
	return "active"
}

// User is an admin of one workspace. PasswordHash is an argon2id PHC string.
type User struct {
	ID           int64
	Workspace    string
	Email        string
	PasswordHash string
	CreatedAt    time.Time
}

// AuditEvent is one entry of the audit log of key and login events.
type AuditEvent struct {
	At        time.Time
	Workspace string
	Actor     string // email, "cli", or the attempted email of a failed login
	Action    string // e.g. key.created, key.revoked, login.succeeded, login.failed
	Target    string // e.g. the key id
	IP        string
	Detail    string
}

// UsageRecord is one authenticated API request (D5). It never holds the
// message text.
type UsageRecord struct {
	At        time.Time
	Workspace string
	KeyID     string
	Endpoint  string // route pattern, e.g. "POST /api/v1/chat"
	Mode      string
	Source    string
	Status    int
	Latency   time.Duration
}

// UsageDay aggregates usage of one key on one UTC day, by status class
// ("2xx", "4xx", ...) and source.
type UsageDay struct {
	Day         string // YYYY-MM-DD
	StatusClass string
	Source      string
	Requests    int
}

// AccessStore holds workspaces, admin users, API keys, the audit log and
// usage rows. Methods return *Error with code ENotFound for a missing row
// and EConflict for a duplicate. Times are kept to the millisecond and read
// back in UTC; emails are compared without regard to ASCII case.
type AccessStore interface {
	// EnsureWorkspace creates the workspace if it does not exist.
	EnsureWorkspace(ctx context.Context, id string) error

	// CreateKey stores a new key; its workspace must exist. It writes the
	// webhook event key.created in the same transaction.
	CreateKey(ctx context.Context, k APIKey) error
	// KeyByID returns the key with that id (ENotFound if none).
	KeyByID(ctx context.Context, id string) (APIKey, error)
	// ListKeys returns the workspace's keys, newest first.
	ListKeys(ctx context.Context, workspace string) ([]APIKey, error)
	// RevokeKey marks the key revoked at `at`. With a non-empty workspace,
	// a key of another workspace is ENotFound. Revoking twice keeps the
	// first time. The first revocation writes the webhook event
	// key.revoked in the same transaction.
	RevokeKey(ctx context.Context, workspace, id string, at time.Time) (APIKey, error)
	// ExpireKeyBy makes the key expire at `at` at the latest (an earlier
	// expiry stays). A key of another workspace is ENotFound.
	ExpireKeyBy(ctx context.Context, workspace, id string, at time.Time) (APIKey, error)
	// RollKey replaces the active key oldID of the workspace by newKey in
	// one transaction: newKey is stored, and the old key is revoked at
	// newKey.CreatedAt when oldEnds is not after it, or else expires at
	// oldEnds at the latest. It writes the webhook events key.created,
	// key.rolled and, when it revokes, key.revoked (WebhookStore). It
	// returns the old key as it is afterwards: ENotFound for a key of
	// another workspace, EConflict for one that is not active.
	RollKey(ctx context.Context, workspace, oldID string, newKey APIKey, oldEnds time.Time) (APIKey, error)
	// RevokedSince returns the ids of keys revoked at or after since.
	RevokedSince(ctx context.Context, since time.Time) ([]string, error)
	// TouchKeys records last-used times in one write.
	TouchKeys(ctx context.Context, lastUsed map[string]time.Time) error

	// CreateUser stores a new admin user (EConflict if the email exists).
	CreateUser(ctx context.Context, u User) (User, error)
	// UserByEmail returns the user with that email (ENotFound if none).
	UserByEmail(ctx context.Context, email string) (User, error)
	// SetPasswordHash replaces the password hash of the user with that
	// email (ENotFound if none).
	SetPasswordHash(ctx context.Context, email, hash string) error
	// CountUsers counts admin users across workspaces.
	CountUsers(ctx context.Context) (int, error)

	// RecordAudit appends to the audit log.
	RecordAudit(ctx context.Context, e AuditEvent) error
	// ListAudit returns the workspace's latest audit events, newest first.
	ListAudit(ctx context.Context, workspace string, limit int) ([]AuditEvent, error)
	// ListAuditPage returns up to limit of the workspace's audit events,
	// newest first, after skipping the offset newest.
	ListAuditPage(ctx context.Context, workspace string, offset, limit int) ([]AuditEvent, error)

	// RecordUsage stores one usage row.
	RecordUsage(ctx context.Context, u UsageRecord) error
	// RecordTurn stores a chat turn's usage row and its citation events in
	// one transaction (D5): both or neither. A citation event already
	// stored (same response id and token) is not stored twice; one with an
	// invalid token is EInvalid (and nothing is stored).
	RecordTurn(ctx context.Context, u UsageRecord, citations []CitationEvent) error
	// UsageByDay aggregates a key's usage from since on, by day, status
	// class and source, ordered by day, class and source.
	UsageByDay(ctx context.Context, workspace, keyID string, since time.Time) ([]UsageDay, error)
	// WorkspaceUsageByDay is UsageByDay over all the workspace's keys.
	WorkspaceUsageByDay(ctx context.Context, workspace string, since time.Time) ([]UsageDay, error)

	// SetSetupToken replaces the one-time first-admin setup token (its
	// SHA-256) and its expiry; ConsumeSetupToken checks and deletes it,
	// reporting whether it was valid at now.
	// CheckSetupToken reports whether it is valid without consuming it.
	SetSetupToken(ctx context.Context, hash [32]byte, expires time.Time) error
	ConsumeSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error)
	CheckSetupToken(ctx context.Context, hash [32]byte, now time.Time) (bool, error)
}

// MaxKeyRateLimit bounds a key's own limit (APIKey.RateLimit): an
// in-process window keeps one timestamp per admitted request.
const MaxKeyRateLimit = 10_000

// ValidKeyRateLimit reports whether n can be a key's own limit: 0 (the
// default) to MaxKeyRateLimit.
func ValidKeyRateLimit(n int) bool { return n >= 0 && n <= MaxKeyRateLimit }
