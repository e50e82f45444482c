package assistant

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Copying a deployment from one store to another (`assistant migrate
// --from ... --to ...`): the source exports every row it holds, the target
// loads them in one transaction, and both count their rows so the copy can
// be verified. Every store implements both sides.

// Workspace is a stored workspace.
type Workspace struct {
	ID        string
	CreatedAt time.Time
}

// SetupToken is the stored one-time setup token: the SHA-256 of the token
// printed at start, and when it stops working.
type SetupToken struct {
	Hash      [32]byte
	ExpiresAt time.Time
}

// RowCounts counts a store's rows of each kind. Admin sessions are not
// counted (nor copied): admins log in again after a migration.
type RowCounts struct {
	Workspaces       int64
	Users            int64
	Keys             int64
	Audit            int64
	Usage            int64
	Citations        int64
	SetupTokens      int64
	Entities         int64
	ImportedEntities int64 // of Entities, those with OriginImported
	ReviewSettings   int64
	Reviews          int64 // kept review turns
}

// Tables lists the counts with the names of the tables they count, in a
// fixed order, for printing and comparing.
func (c RowCounts) Tables() []TableCount {
	return []TableCount{
		{"workspaces", c.Workspaces}, {"users", c.Users}, {"api_keys", c.Keys}, {"audit_log", c.Audit},
		{"usage", c.Usage}, {"citation_events", c.Citations}, {"setup_tokens", c.SetupTokens},
		{"entities", c.Entities}, {"entities (imported)", c.ImportedEntities},
		{"review_settings", c.ReviewSettings}, {"reviews", c.Reviews},
	}
}

// RequireEmptyTarget is the precondition of loading a copy into a store
// holding c: it holds nothing but what a first start leaves (embedded
// entities, a setup token). Otherwise it is EConflict, naming what is held.
func (c RowCounts) RequireEmptyTarget() error {
	var what []string
	for _, t := range c.Tables() {
		switch t.Table {
		case "entities", "setup_tokens":
			continue
		}
		if t.Rows > 0 {
			what = append(what, fmt.Sprintf("%s: %d", t.Table, t.Rows))
		}
	}
	if len(what) == 0 {
		return nil
	}
	return Errorf(EConflict, "the target database already holds data (%s); copying is only into a database that holds none", strings.Join(what, ", "))
}

// WorkspaceReviewSetting is a workspace's stored review setting, as
// copied.
type WorkspaceReviewSetting struct {
	Workspace string
	Setting   ReviewSetting
	UpdatedAt time.Time
}

// TableCount is one line of RowCounts.Tables.
type TableCount struct {
	Table string
	Rows  int64
}

// Exporter reads everything a store holds except admin sessions. Times
// come back in UTC, to the millisecond, like every other read.
type Exporter interface {
	// RowCounts counts the rows of each kind.
	RowCounts(ctx context.Context) (RowCounts, error)
	// ExportWorkspaces returns every workspace, ordered by id.
	ExportWorkspaces(ctx context.Context) ([]Workspace, error)
	// ExportUsers returns every admin user with its id and password hash,
	// ordered by id.
	ExportUsers(ctx context.Context) ([]User, error)
	// ExportKeys returns every API key (hashes only, as stored), oldest
	// first.
	ExportKeys(ctx context.Context) ([]APIKey, error)
	// ExportAudit yields the audit log in the order it was written.
	ExportAudit(ctx context.Context) iter.Seq2[AuditEvent, error]
	// ExportUsage yields the usage rows in the order they were written.
	ExportUsage(ctx context.Context) iter.Seq2[UsageRecord, error]
	// ExportCitations yields the citation events in the order they were
	// written.
	ExportCitations(ctx context.Context) iter.Seq2[CitationEvent, error]
	// ExportSetupToken returns the setup token, or nil when there is none.
	ExportSetupToken(ctx context.Context) (*SetupToken, error)
	// AllEntities returns every entity with its origin, ordered by token.
	AllEntities(ctx context.Context) ([]Entity, error)
	// ExportReviewSettings returns every workspace's conversation-review
	// setting, ordered by workspace.
	ExportReviewSettings(ctx context.Context) ([]WorkspaceReviewSetting, error)
	// ExportReviews yields every kept review turn in full, with its
	// expiry (expired ones not yet purged included), by time, then id.
	ExportReviews(ctx context.Context) iter.Seq2[Review, error]
}

// Loader fills a store with another store's data.
type Loader interface {
	// LoadFrom copies everything src exports into this store in one
	// transaction, keeping user ids, key hashes, entity origins, the
	// order of the audit log, usage rows and citation events, and the
	// review settings and kept turns with their expiries, and returns
	// the counts of what it wrote. The store must hold nothing but what a
	// first start leaves in an empty database (the embedded entities and a
	// setup token), which src's entities and setup token replace;
	// otherwise it returns EConflict, naming what it holds, and changes
	// nothing. On any error nothing changes.
	LoadFrom(ctx context.Context, src Exporter) (RowCounts, error)
}
