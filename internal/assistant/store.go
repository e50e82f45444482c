package assistant

import (
	"context"
	"time"
)

// KnowledgeStore holds the knowledge entities. Implementations:
// internal/sqlite and internal/postgres, both held to internal/storetest.
// All methods return *Error values with the codes documented on each
// method; any other error is an internal failure.
type KnowledgeStore interface {
	// SyncEntities makes the stored entities of the given origin equal to
	// entities: new ones are inserted, changed ones updated, and entities of
	// that origin that are no longer listed are deleted. An imported entity
	// is never overwritten or deleted by a sync of embedded entities. It runs
	// in one transaction: on error nothing changes. It reports how many rows
	// it inserted, updated and deleted.
	SyncEntities(ctx context.Context, origin string, entities []Entity) (SyncResult, error)

	// Entities returns the entities whose tokens are listed, keyed by token.
	// Tokens that do not exist are simply absent from the map.
	Entities(ctx context.Context, tokens []Token) (map[Token]Entity, error)

	// AllEntities returns every entity, ordered by token.
	AllEntities(ctx context.Context) ([]Entity, error)

	// KnowledgeStats counts the entities by type.
	KnowledgeStats(ctx context.Context) (KnowledgeStats, error)

	// KnowledgeVersion returns a number that changes whenever any entity is
	// inserted, updated or deleted, by any process sharing the store. It is
	// cheap (one indexed read), so in-memory views of the knowledge base
	// can check it often and rebuild only when it moved.
	KnowledgeVersion(ctx context.Context) (int64, error)
}

// KnowledgeImporter adds entities from outside the embedded corpus
// (`assistant kb import`). Implementations: internal/sqlite, internal/postgres.
type KnowledgeImporter interface {
	// ImportEntities inserts each entity, or replaces the stored entity with
	// its token (embedded or imported), marking it OriginImported so that
	// later syncs of the embedded corpus leave it alone. It never deletes.
	// It runs in one transaction: on error nothing changes. It returns
	// EInvalid for an entity whose token is not valid, and reports how many
	// rows it inserted, updated and left unchanged.
	ImportEntities(ctx context.Context, entities []Entity) (SyncResult, error)
}

// SyncResult reports what SyncEntities changed.
type SyncResult struct {
	Inserted, Updated, Deleted, Unchanged int
}

// Retriever ranks entities for a free-text query. It is what /search and the
// chat tools use. It returns EInvalid for a query with no searchable words.
type Retriever interface {
	Search(ctx context.Context, q SearchQuery) ([]SearchResult, error)
}

// SearchQuery is a retrieval request.
type SearchQuery struct {
	Text  string
	Type  EntityType // "" for any type
	Limit int
	// Industry holds the stems (textproc.Stem) of the query's words that
	// only say which industry it is asked in ("bakery", "clinic"), as the
	// chat turn's reading found them. Such a word counts for less than
	// the words that say what is asked, and not in matching situations:
	// an industry named once in one entity's example would otherwise
	// pull that entity into every question from the industry. Empty: all
	// words count alike (the public /search).
	Industry []string
}

// SearchResult is one ranked entity; Score is higher for better matches and
// comparable only within one result list.
type SearchResult struct {
	Entity Entity
	Score  float64
}

// CitationEvent records that one chat response cited one entity. The
// leaderboard counts them; an entity counts at most once per response (D12).
type CitationEvent struct {
	ResponseID string
	Workspace  string
	Source     string
	Token      Token
	At         time.Time
}

// CitationStore records citation events and ranks entities by them.
type CitationStore interface {
	// RecordCitations stores events in one transaction; a second event for
	// the same (ResponseID, Token) pair is ignored. An event whose token is
	// not valid is EInvalid, and then none is stored.
	RecordCitations(ctx context.Context, events []CitationEvent) error

	// Leaderboard returns the most cited entities with since <= At < until,
	// most citations first, ties broken by token ascending, at most limit.
	Leaderboard(ctx context.Context, since, until time.Time, limit int) ([]LeaderboardEntry, error)
}

// LeaderboardEntry is one ranked entity of the leaderboard. Title is empty
// when the cited entity no longer exists in the knowledge base.
type LeaderboardEntry struct {
	Token     Token
	Title     string
	Citations int
}

// Pinger reports whether a backing store is reachable (used by /readyz).
type Pinger interface {
	Ping(ctx context.Context) error
}
