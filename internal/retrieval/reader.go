package retrieval

import (
	"context"

	"github.com/constraintlab/assistant/internal/assistant"
)

// Entities returns the snapshot's entities with the listed tokens, keyed by
// token; unknown tokens are absent. The entities share their lists with
// the snapshot and must not be modified.
func (s *Snapshot) Entities(tokens []assistant.Token) map[assistant.Token]assistant.Entity {
	out := make(map[assistant.Token]assistant.Entity, len(tokens))
	for _, t := range tokens {
		if i, ok := s.byToken[t]; ok {
			out[t] = s.docs[i].entity
		}
	}
	return out
}

// Entity returns the snapshot's entity with token t, and whether there is
// one: Entities of one token, without the map.
func (s *Snapshot) Entity(t assistant.Token) (assistant.Entity, bool) {
	if i, ok := s.byToken[t]; ok {
		return s.docs[i].entity, true
	}
	return assistant.Entity{}, false
}

// All returns every entity, ordered by token. The slice is new; the
// entities share their lists with the snapshot and must not be modified.
func (s *Snapshot) All() []assistant.Entity {
	out := make([]assistant.Entity, len(s.docs))
	for i, d := range s.docs {
		out[i] = d.entity
	}
	return out
}

// Stats counts the snapshot's entities by type.
func (s *Snapshot) Stats() assistant.KnowledgeStats { return s.stats }

// Reader is a KnowledgeStore whose reads are answered from the index's
// snapshot, in memory, and whose writes go to the store. A read reflects
// a write within the index's check interval (plus the rebuild), whichever
// process or instance made it. It is what the HTTP handlers and the chat
// turn read knowledge through.
type Reader struct {
	assistant.KnowledgeStore // SyncEntities goes to the store
	ix                       *Index
}

var _ assistant.KnowledgeStore = Reader{}

// Reader returns a Reader over store, which must be the index's source.
func (ix *Index) Reader(store assistant.KnowledgeStore) Reader {
	return Reader{KnowledgeStore: store, ix: ix}
}

// Entities implements assistant.KnowledgeStore from the snapshot.
func (r Reader) Entities(ctx context.Context, tokens []assistant.Token) (map[assistant.Token]assistant.Entity, error) {
	s, err := r.ix.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.Entities(tokens), nil
}

// AllEntities implements assistant.KnowledgeStore from the snapshot.
// Lookup returns a function that finds an entity by token in one snapshot,
// as Entities does, without building a map of them: a chat turn looks its
// entities up one at a time.
func (r Reader) Lookup(ctx context.Context) (func(assistant.Token) (assistant.Entity, bool), error) {
	s, err := r.ix.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.Entity, nil
}

func (r Reader) AllEntities(ctx context.Context) ([]assistant.Entity, error) {
	s, err := r.ix.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.All(), nil
}

// KnowledgeStats implements assistant.KnowledgeStore from the snapshot.
func (r Reader) KnowledgeStats(ctx context.Context) (assistant.KnowledgeStats, error) {
	s, err := r.ix.Snapshot(ctx)
	if err != nil {
		return assistant.KnowledgeStats{}, err
	}
	return s.Stats(), nil
}

// KnowledgeVersion implements assistant.KnowledgeStore: the version of the
// snapshot the reads come from (not the store's newest).
func (r Reader) KnowledgeVersion(ctx context.Context) (int64, error) {
	s, err := r.ix.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return s.Version, nil
}
