// Package retrieval ranks knowledge entities for a free-text query. It is
// the one place where ranking lives, whatever store holds the entities: it
// keeps an immutable in-memory index of them (a snapshot), rebuilt when the
// store's knowledge version moves, and scores with field-weighted BM25 over
// the query's weight classes (its own words, synonyms, associations).
//
// Because every store is read through the same two calls (AllEntities and
// KnowledgeVersion), SQLite and PostgreSQL rank identically: the same
// entities give the same scores, in the same order, with the same ties.
package retrieval

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/go-porterstemmer"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/textproc"
)

// Source is what the index reads from a store.
type Source interface {
	AllEntities(ctx context.Context) ([]assistant.Entity, error)
	KnowledgeVersion(ctx context.Context) (int64, error)
}

// DefaultCheckInterval is how often the index asks the store whether the
// knowledge changed. A change made by any process (a `kb import`, another
// instance) is searched within this interval plus the time to rebuild.
const DefaultCheckInterval = 250 * time.Millisecond

// Index implements assistant.Retriever over a Source. It is safe for
// concurrent use; searches never wait for a rebuild once a first snapshot
// exists (they use the previous one meanwhile).
type Index struct {
	src           Source
	checkInterval time.Duration
	now           func() time.Time

	snap      atomic.Pointer[Snapshot]
	lastCheck atomic.Int64 // unix nanoseconds of the last version check
	refresh   sync.Mutex   // held while checking or rebuilding
}

var _ assistant.Retriever = (*Index)(nil)

// Option configures an Index.
type Option func(*Index)

// WithCheckInterval sets how often the store's version is checked (0
// checks on every search).
func WithCheckInterval(d time.Duration) Option { return func(ix *Index) { ix.checkInterval = d } }

// WithClock sets the clock used to space version checks (tests).
func WithClock(now func() time.Time) Option { return func(ix *Index) { ix.now = now } }

// NewIndex returns an index over src. It reads nothing until first used.
func NewIndex(src Source, opts ...Option) *Index {
	ix := &Index{src: src, checkInterval: DefaultCheckInterval, now: time.Now}
	for _, o := range opts {
		o(ix)
	}
	return ix
}

// Snapshot returns the current snapshot, checking the store's version when
// the last check is older than the check interval and rebuilding when it
// moved. While one caller rebuilds, others get the previous snapshot.
func (ix *Index) Snapshot(ctx context.Context) (*Snapshot, error) {
	cur := ix.snap.Load()
	if cur != nil && ix.now().UnixNano()-ix.lastCheck.Load() < int64(ix.checkInterval) {
		return cur, nil
	}
	if cur != nil {
		if !ix.refresh.TryLock() {
			return cur, nil // someone else is checking
		}
	} else {
		ix.refresh.Lock()
	}
	defer ix.refresh.Unlock()
	if s := ix.snap.Load(); s != cur && s != nil {
		return s, nil // rebuilt while we waited for the lock
	}
	checked := ix.now()
	v, err := ix.src.KnowledgeVersion(ctx)
	if err != nil {
		if cur != nil {
			return cur, nil // keep serving what we have; the next search retries
		}
		return nil, err
	}
	if cur != nil && cur.Version == v {
		ix.lastCheck.Store(checked.UnixNano())
		return cur, nil
	}
	entities, err := ix.src.AllEntities(ctx)
	if err != nil {
		if cur != nil {
			return cur, nil
		}
		return nil, err
	}
	next := Build(v, entities)
	ix.snap.Store(next)
	ix.lastCheck.Store(checked.UnixNano())
	return next, nil
}

// Search implements assistant.Retriever.
func (ix *Index) Search(ctx context.Context, q assistant.SearchQuery) ([]assistant.SearchResult, error) {
	s, err := ix.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return s.Search(q), nil
}

// Fields of an entity that are searched, and their BM25 weights: a word in
// the title counts most, then tags, when-to-use, key ideas, the summary,
// and last the pitfalls and authors.
const (
	fieldTitle = iota
	fieldTags
	fieldKeyIdeas
	fieldWhenToUse
	fieldSummary
	fieldExtra
	numFields
)

var fieldWeights = [numFields]float64{8.0, 5.0, 3.0, 4.0, 2.0, 1.0}

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// expansionCeiling bounds what the added terms of one weight class can
// contribute, in BM25 units (about one well-matched word of the query): an
// entity that matches many synonyms gains little over one that matches a
// few, so expansion breaks ties between entities the query's own words
// leave close rather than outvoting those words.
const expansionCeiling = 10.0

// saturate maps a BM25 sum smoothly onto [0, expansionCeiling).
func saturate(score float64) float64 {
	return expansionCeiling * (1 - math.Exp(-score/expansionCeiling))
}

// Snapshot is an immutable index of one version of the knowledge base.
type Snapshot struct {
	// Version is the store's knowledge version the snapshot was built from.
	Version int64

	docs   []doc
	terms  map[string]uint32 // stem -> term id
	posts  [][]posting       // by term id, docs ascending
	avgLen float64
}

type doc struct {
	entity assistant.Entity
	token  string
	length int                 // words in all searched fields
	fields [numFields][]uint32 // term ids in order, for phrases
}

// posting is one document's occurrences of a term, counted per field.
type posting struct {
	doc uint32
	tf  [numFields]uint16
}

// Build indexes entities as the snapshot of version.
func Build(version int64, entities []assistant.Entity) *Snapshot {
	s := &Snapshot{Version: version, terms: map[string]uint32{}, docs: make([]doc, len(entities))}
	sorted := slices.Clone(entities)
	slices.SortFunc(sorted, func(a, b assistant.Entity) int { return strings.Compare(a.Token().String(), b.Token().String()) })
	total := 0
	for i, e := range sorted {
		d := &s.docs[i]
		d.entity, d.token = e, e.Token().String()
		texts := [numFields]string{
			fieldTitle:     e.Title,
			fieldTags:      strings.Join(e.Tags, " "),
			fieldKeyIdeas:  strings.Join(e.KeyIdeas, "\n"),
			fieldWhenToUse: strings.Join(e.WhenToUse, "\n"),
			fieldSummary:   e.Summary,
			fieldExtra:     strings.Join(append(slices.Clone(e.Pitfalls), e.Authors...), "\n"),
		}
		counts := map[uint32]*[numFields]uint16{}
		var order []uint32
		for f, text := range texts {
			ws := indexWords(text)
			d.fields[f] = make([]uint32, len(ws))
			for j, w := range ws {
				id, ok := s.terms[w]
				if !ok {
					id = uint32(len(s.posts))
					s.terms[w] = id
					s.posts = append(s.posts, nil)
				}
				d.fields[f][j] = id
				c := counts[id]
				if c == nil {
					c = new([numFields]uint16)
					counts[id] = c
					order = append(order, id)
				}
				if c[f] < math.MaxUint16 {
					c[f]++
				}
			}
			d.length += len(ws)
		}
		for _, id := range order {
			s.posts[id] = append(s.posts[id], posting{doc: uint32(i), tf: *counts[id]})
		}
		total += d.length
	}
	if len(s.docs) > 0 {
		s.avgLen = float64(total) / float64(len(s.docs))
	}
	return s
}

// indexWords splits and stems text as queries are: the shared word
// splitter, stop words kept (they count in a field's length and in
// phrases), and the original Porter stemmer. Porter rather than the
// Snowball stemmer the rest of the service uses, because it conflates
// less ("try" and "tried" stay apart), which measured better on the
// retrieval dev sets and keeps the ranking the SQLite full-text index
// gave before ranking moved here.
func indexWords(text string) []string {
	ws := textproc.Words(text)
	for i, w := range ws {
		ws[i] = porterstemmer.StemString(w)
	}
	return ws
}

// Len is the number of entities in the snapshot.
func (s *Snapshot) Len() int { return len(s.docs) }

// Search ranks the snapshot's entities for q. The query is analysed by the
// knowledge package (knowledge.Vocabulary): its own words, plus synonyms
// and business associations at lower weights. Each weight class is scored
// with field-weighted BM25 over all entities; the classes of added terms
// are saturated (see expansionCeiling), and an entity's score is the
// weighted sum of its class scores. Ties break by token. A query with no
// searchable words returns no results.
func (s *Snapshot) Search(q assistant.SearchQuery) []assistant.SearchResult {
	terms := knowledge.DefaultVocabulary().Analyze(q.Text)
	if len(terms) == 0 || len(s.docs) == 0 {
		return nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	var weights []float64
	classes := map[float64][]string{}
	for _, t := range terms {
		if _, ok := classes[t.Weight]; !ok {
			weights = append(weights, t.Weight)
		}
		classes[t.Weight] = append(classes[t.Weight], t.Text)
	}
	scores := map[uint32]float64{}
	for _, w := range weights {
		for d, score := range s.bm25(classes[w]) {
			if w < knowledge.WeightOriginal {
				score = saturate(score)
			}
			scores[d] += w * score
		}
	}
	ranked := make([]uint32, 0, len(scores))
	for d := range scores {
		if q.Type == "" || s.docs[d].entity.Type == q.Type {
			ranked = append(ranked, d)
		}
	}
	slices.SortFunc(ranked, func(a, b uint32) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // docs are in token order
	})
	ranked = ranked[:min(limit, len(ranked))]
	out := make([]assistant.SearchResult, len(ranked))
	for i, d := range ranked {
		out[i] = assistant.SearchResult{Entity: s.docs[d].entity, Score: scores[d]}
	}
	return out
}

// bm25 scores every entity that contains at least one of the phrases
// (words or runs of words): per phrase, its inverse document frequency
// times a saturated, length-normalised count of its occurrences, each
// weighted by the field it occurs in.
func (s *Snapshot) bm25(phrases []string) map[uint32]float64 {
	n := float64(len(s.docs))
	scores := map[uint32]float64{}
	for _, p := range phrases {
		hits := s.phraseHits(p)
		if len(hits) == 0 {
			continue
		}
		idf := math.Log((n - float64(len(hits)) + 0.5) / (float64(len(hits)) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for d, tf := range hits {
			norm := bm25K1 * (1 - bm25B + bm25B*float64(s.docs[d].length)/s.avgLen)
			scores[d] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	return scores
}

// phraseHits returns, for each entity containing the phrase, its
// field-weighted occurrence count.
func (s *Snapshot) phraseHits(phrase string) map[uint32]float64 {
	words := indexWords(phrase)
	if len(words) == 0 {
		return nil
	}
	ids := make([]uint32, len(words))
	for i, w := range words {
		id, ok := s.terms[w]
		if !ok {
			return nil
		}
		ids[i] = id
	}
	hits := map[uint32]float64{}
	if len(ids) == 1 {
		for _, p := range s.posts[ids[0]] {
			var w float64
			for f, c := range p.tf {
				w += fieldWeights[f] * float64(c)
			}
			hits[p.doc] = w
		}
		return hits
	}
	// A phrase: the documents holding its rarest word, checked for the
	// whole run of words in each field.
	rarest := ids[0]
	for _, id := range ids[1:] {
		if len(s.posts[id]) < len(s.posts[rarest]) {
			rarest = id
		}
	}
	for _, p := range s.posts[rarest] {
		var w float64
		for f, seq := range s.docs[p.doc].fields {
			if p.tf[f] == 0 {
				continue
			}
			for i := 0; i+len(ids) <= len(seq); i++ {
				if slices.Equal(seq[i:i+len(ids)], ids) {
					w += fieldWeights[f]
				}
			}
		}
		if w > 0 {
			hits[p.doc] = w
		}
	}
	return hits
}
