// Package retrieval ranks knowledge entities for a free-text query. It is
// the one place where ranking lives, whatever store holds the entities: it
// keeps an immutable in-memory index of them (a snapshot), rebuilt when the
// store's knowledge version moves, and scores with field-weighted BM25 over
// the query's weight classes (its own words, synonyms, associations), plus,
// for a long query, BM25 over the entities' single "When to use"
// situations (situationShare).
//
// Because every store is read through the same two calls (AllEntities and
// KnowledgeVersion), SQLite and PostgreSQL rank identically: the same
// entities give the same scores, in the same order, with the same ties.
// The same snapshot answers hover cards and counts (Reader), so the public
// knowledge endpoints read memory, not the database.
package retrieval

import (
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
//
// Everything a query needs that does not depend on the query is computed
// when the snapshot is built: each posting carries its entity's BM25
// term-frequency component (field-weighted count, length-normalised,
// saturated), and the vocabulary's phrases are matched ahead of time, so a
// search only adds idf × component along the posting lists of its terms.
//
// The postings of all terms are packed in two flat slices (entity numbers
// and components), each term's run found by its offset: 12 bytes a
// posting and no slice header per term, which at 100k entities is most of
// the snapshot's memory.
type Snapshot struct {
	// Version is the store's knowledge version the snapshot was built from.
	Version int64

	docs    []doc
	byToken map[assistant.Token]uint32
	stats   assistant.KnowledgeStats
	terms   map[string]uint32 // stemmed word, or stemmed phrase words joined by spaces -> term id
	entries postings          // the entities' postings (documents are entity numbers)

	// The situations index: every "When to use" line of every entity,
	// with the entity's title, is a small document of its own (see
	// situationShare), over the same term ids.
	lines      postings // documents are line numbers
	lineEntity []uint32 // by line: the entity it belongs to

	accumulators sync.Pool // *accumulator, sized for len(docs) and len(lineEntity)
}

type doc struct {
	entity assistant.Entity
}

// Build indexes entities as the snapshot of version.
//
// The entities' text is read twice, word by word without copying it: once
// to count each term's entities and each entity's length, then again to
// write each posting in its place in the packed slices, sized exactly.
// Reading twice costs less than keeping every entity's counts in between.
func Build(version int64, entities []assistant.Entity) *Snapshot {
	s := &Snapshot{Version: version, terms: map[string]uint32{}, docs: make([]doc, len(entities))}
	// Entities in token order, each token made once rather than in every
	// comparison.
	keys := make([]string, len(entities))
	order := make([]int, len(entities))
	for i := range entities {
		keys[i], order[i] = entities[i].Token().String(), i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	keys = nil
	s.byToken = make(map[assistant.Token]uint32, len(entities))
	for i, j := range order {
		e := entities[j]
		s.docs[i] = doc{entity: e}
		s.byToken[e.Token()] = uint32(i)
		s.stats.Total++
		switch e.Type {
		case assistant.Framework:
			s.stats.Frameworks++
		case assistant.Paper:
			s.stats.Papers++
		case assistant.Blog:
			s.stats.Blogs++
		}
	}
	order = nil

	b := newBuilder(s)
	// Pass 1: document frequencies, entity lengths and their total.
	var df []uint32
	lengths := make([]uint32, len(s.docs))
	total := 0
	for i := range s.docs {
		counts, length := b.count(&s.docs[i].entity)
		lengths[i] = uint32(length)
		total += length
		for len(df) < b.numTerms {
			df = append(df, 0)
		}
		for _, c := range counts {
			df[c.term]++
		}
	}

	// Pass 2: each posting's length-normalised component, in entity order
	// within its term. The terms are those of pass 1: the same text gives
	// the same words.
	numTerms := b.numTerms
	next := s.entries.size(df, numTerms)
	avg := averageLength(total, len(s.docs))
	for i := range s.docs {
		counts, _ := b.count(&s.docs[i].entity)
		s.entries.put(next, uint32(i), counts, int(lengths[i]), avg)
	}
	s.entries.weigh(len(s.docs))
	s.buildSituations(b, numTerms)
	docs, lines := len(s.docs), len(s.lineEntity)
	s.accumulators.New = func() any { return newAccumulator(docs, lines) }
	return s
}

// buildSituations indexes each "When to use" line of each entity, with the
// entity's title, as a document of its own: BM25 over lines, with the
// usual parameters, every word counted once per occurrence (no field
// weights: a line is one field). The terms are the snapshot's, so a query
// term has one id in both indexes; a word only lines hold cannot occur
// (every line is also part of its entity's text).
func (s *Snapshot) buildSituations(b *builder, numTerms int) {
	var counts [][]termCount
	var lengths []int
	total := 0
	for i := range s.docs {
		e := &s.docs[i].entity
		for _, line := range e.WhenToUse {
			c, n := b.countLine(e.Title, line)
			counts = append(counts, c)
			lengths = append(lengths, n)
			s.lineEntity = append(s.lineEntity, uint32(i))
			total += n
		}
	}
	df := make([]uint32, numTerms)
	for _, c := range counts {
		for _, tc := range c {
			df[tc.term]++
		}
	}
	next := s.lines.size(df, numTerms)
	avg := averageLength(total, len(counts))
	for l, c := range counts {
		s.lines.put(next, uint32(l), c, lengths[l], avg)
	}
	s.lines.weigh(len(counts))
}

// postings are one index's packed BM25 postings: the documents holding
// term id, and each one's component, are the run [starts[id],
// starts[id+1]) of docs and tf. All terms' runs share two flat slices.
type postings struct {
	starts []uint32  // by term id, and one more
	docs   []uint32  // the postings' documents, ascending within a term
	tf     []float64 // the postings' length-normalised term-frequency components
	idf    []float64 // by term id
}

// size lays out the runs for the document frequencies df (by term id; a
// term past its end is in no document) of numTerms terms, each run
// starting where the previous ends, and returns where each term's next
// posting goes (put).
func (p *postings) size(df []uint32, numTerms int) []uint32 {
	p.starts = make([]uint32, numTerms+1)
	for id := 0; id < numTerms; id++ {
		n := uint32(0)
		if id < len(df) {
			n = df[id]
		}
		p.starts[id+1] = p.starts[id] + n
	}
	size := p.starts[numTerms]
	p.docs, p.tf = make([]uint32, size), make([]float64, size)
	return slices.Clone(p.starts[:numTerms])
}

// put writes document d's postings, its term counts over its length in
// words against the average length; documents are put in ascending order.
func (p *postings) put(next []uint32, d uint32, counts []termCount, length int, avg float64) {
	norm := bm25K1 * (1 - bm25B + bm25B*float64(length)/avg)
	for _, c := range counts {
		at := next[c.term]
		next[c.term]++
		p.docs[at] = d
		p.tf[at] = c.w * (bm25K1 + 1) / (c.w + norm)
	}
}

// weigh sets each term's BM25 inverse document frequency over n
// documents; a term in half the documents or more gets a small positive
// weight rather than none.
func (p *postings) weigh(n int) {
	p.idf = make([]float64, len(p.starts)-1)
	for id := range p.idf {
		list := float64(p.starts[id+1] - p.starts[id])
		idf := math.Log((float64(n) - list + 0.5) / (list + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		p.idf[id] = idf
	}
}

// addTo adds term id's score to each of its documents' sums, and lists in
// hit the documents not yet seen, marking them seen.
func (p *postings) addTo(id uint32, sum []float64, seen []bool, hit []uint32) []uint32 {
	idf := p.idf[id]
	lo, hi := p.starts[id], p.starts[id+1]
	tfs := p.tf[lo:hi]
	for j, d := range p.docs[lo:hi] {
		if !seen[d] {
			seen[d] = true
			hit = append(hit, d)
		}
		sum[d] += idf * tfs[j]
	}
	return hit
}

// averageLength is the mean length of n documents of total words, 1 when
// there are none.
func averageLength(total, n int) float64 {
	if n == 0 || total == 0 {
		return 1
	}
	return float64(total) / float64(n)
}

// builder turns an entity's fields into weighted term counts: the words of
// each field, stemmed once per distinct word, and the vocabulary's phrases
// among them. Its buffers are reused from entity to entity.
type builder struct {
	s        *Snapshot
	numTerms int
	wordIDs  map[string]uint32 // lowercase word -> term id of its stem
	// phrasesByFirst lists the vocabulary's phrases, as runs of term ids,
	// by their first term, so that each position of a field is checked
	// against the few phrases that can start there.
	phrasesByFirst map[uint32][]phrase
	counts         []termCount // the current entity's counts
	slot           []int32     // by term id: index in counts + 1, 0 when absent
	ids            []uint32    // the current field's term ids
	lower          []byte      // a word being lowercased
}

type phrase struct {
	id    uint32
	words []uint32
}

// termCount is an entity's field-weighted count of a term.
type termCount struct {
	term uint32
	w    float64
}

func newBuilder(s *Snapshot) *builder {
	b := &builder{s: s, wordIDs: map[string]uint32{}, phrasesByFirst: map[uint32][]phrase{}}
	for _, p := range knowledge.DefaultVocabulary().Phrases() {
		ws := textproc.Words(p)
		if len(ws) < 2 {
			continue
		}
		ids := make([]uint32, len(ws))
		stems := make([]string, len(ws))
		for i, w := range ws {
			ids[i] = b.termOf(w)
			stems[i] = porterstemmer.StemString(w)
		}
		key := strings.Join(stems, " ")
		if _, ok := s.terms[key]; ok {
			continue
		}
		b.phrasesByFirst[ids[0]] = append(b.phrasesByFirst[ids[0]], phrase{b.newTerm(key), ids})
	}
	return b
}

func (b *builder) newTerm(key string) uint32 {
	id := uint32(b.numTerms)
	b.s.terms[key] = id
	b.numTerms++
	return id
}

// termOf returns the term id of a lowercase word. The word may be a
// buffer reused by the caller: it is copied only when first seen.
func (b *builder) termOf(word string) uint32 {
	if id, ok := b.wordIDs[word]; ok {
		return id
	}
	word = strings.Clone(word)
	st := porterstemmer.StemString(word)
	id, ok := b.s.terms[st]
	if !ok {
		id = b.newTerm(st)
	}
	b.wordIDs[word] = id
	return id
}

// termOfBytes is termOf for a word in a byte buffer.
func (b *builder) termOfBytes(word []byte) uint32 {
	if id, ok := b.wordIDs[string(word)]; ok {
		return id
	}
	return b.termOf(string(word))
}

// count returns e's field-weighted term counts, in the order each term
// first occurs, and e's length in words (phrases not counted). The slice
// is the builder's and is overwritten by the next call.
func (b *builder) count(e *assistant.Entity) ([]termCount, int) {
	for _, c := range b.counts {
		b.slot[c.term] = 0
	}
	b.counts = b.counts[:0]
	length := 0
	// A field of several strings is searched as their words in turn (as if
	// joined by a separator), so a phrase may run from one into the next.
	field := func(f int, lists ...[]string) {
		b.ids = b.ids[:0]
		for _, list := range lists {
			for _, part := range list {
				b.addWords(part)
			}
		}
		b.addField(fieldWeights[f])
		length += len(b.ids)
	}
	title, summary := [1]string{e.Title}, [1]string{e.Summary}
	field(fieldTitle, title[:])
	field(fieldTags, e.Tags)
	field(fieldKeyIdeas, e.KeyIdeas)
	field(fieldWhenToUse, e.WhenToUse)
	field(fieldSummary, summary[:])
	field(fieldExtra, e.Pitfalls, e.Authors)
	return b.counts, length
}

// countLine returns the term counts of a title and one of its entity's
// situations read as one document (phrases within each), in a new slice,
// and its length in words.
func (b *builder) countLine(title, line string) ([]termCount, int) {
	for _, c := range b.counts {
		b.slot[c.term] = 0
	}
	b.counts = b.counts[:0]
	length := 0
	for _, text := range [2]string{title, line} {
		b.ids = b.ids[:0]
		b.addWords(text)
		b.addField(1)
		length += len(b.ids)
	}
	return slices.Clone(b.counts), length
}

// addField counts the words of b.ids, and the vocabulary's phrases among
// them, w each.
func (b *builder) addField(w float64) {
	for j, id := range b.ids {
		b.add(id, w)
		for _, p := range b.phrasesByFirst[id] {
			if j+len(p.words) <= len(b.ids) && slices.Equal(b.ids[j:j+len(p.words)], p.words) {
				b.add(p.id, w)
			}
		}
	}
}

// add counts w more of term id for the current entity.
func (b *builder) add(id uint32, w float64) {
	for int(id) >= len(b.slot) {
		b.slot = append(b.slot, 0)
	}
	if j := b.slot[id]; j > 0 {
		b.counts[j-1].w += w
		return
	}
	b.counts = append(b.counts, termCount{id, w})
	b.slot[id] = int32(len(b.counts))
}

// addWords appends the term ids of text's words (textproc.Words) to
// b.ids. ASCII text, nearly all of it, is split here without building
// the list of words or a lowercase copy of the text.
func (b *builder) addWords(text string) {
	if !isASCII(text) {
		for _, w := range textproc.Words(text) {
			b.ids = append(b.ids, b.termOf(w))
		}
		return
	}
	for i := 0; i < len(text); {
		if !isASCIIWordByte(text[i]) {
			i++
			continue
		}
		start, upper := i, false
		for ; i < len(text) && isASCIIWordByte(text[i]); i++ {
			upper = upper || 'A' <= text[i] && text[i] <= 'Z'
		}
		if !upper {
			b.ids = append(b.ids, b.termOf(text[start:i]))
			continue
		}
		b.lower = b.lower[:0]
		for _, c := range []byte(text[start:i]) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.lower = append(b.lower, c)
		}
		b.ids = append(b.ids, b.termOfBytes(b.lower))
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isASCIIWordByte reports whether an ASCII byte is a letter or a digit,
// as unicode.IsLetter and unicode.IsDigit would.
func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// queryKey is the index key of a query term: its words stemmed with the
// original Porter stemmer and joined by spaces. Porter rather than the
// Snowball stemmer the rest of the service uses, because it conflates less
// ("try" and "tried" stay apart), which measured better on the retrieval
// dev sets and keeps the ranking the SQLite full-text index gave before
// ranking moved here. Entity text is split with the same word splitter
// (textproc.Words), stop words kept: they count in a field's length and
// in phrases.
func queryKey(term string) string {
	ws := textproc.Words(term)
	for i, w := range ws {
		ws[i] = porterstemmer.StemString(w)
	}
	return strings.Join(ws, " ")
}

// Len is the number of entities in the snapshot.
func (s *Snapshot) Len() int { return len(s.docs) }

// accumulator sums scores per entity without a map: a dense array and the
// list of entities touched, so that resetting costs what was used.
type accumulator struct {
	class, total     []float64
	classSeen, seen  []bool
	classHit, totHit []uint32
	// line sums each situation line's score; lineHit lists the lines
	// touched (lineSeen).
	line     []float64
	lineSeen []bool
	lineHit  []uint32
}

func newAccumulator(n, lines int) *accumulator {
	return &accumulator{class: make([]float64, n), total: make([]float64, n), classSeen: make([]bool, n), seen: make([]bool, n), line: make([]float64, lines), lineSeen: make([]bool, lines)}
}

// Search ranks the snapshot's entities for q. The query is analysed by the
// knowledge package (knowledge.Vocabulary): its own words, plus synonyms
// and business associations at lower weights. Each weight class is scored
// with field-weighted BM25 over all entities (per term, its inverse
// document frequency times the entity's saturated, length-normalised,
// field-weighted count of it); the classes of added terms are saturated
// (see expansionCeiling), and an entity's score is the weighted sum of its
// class scores; for a long query, part of it comes from its closest
// situation instead (situationShare). Ties break by token. A query with
// no searchable words returns no results.
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
		if t.Weight == knowledge.WeightOriginal && len(q.Industry) > 0 && slices.Contains(q.Industry, textproc.Stem(t.Text)) {
			t.Weight = industryWeight
		}
		if _, ok := classes[t.Weight]; !ok {
			weights = append(weights, t.Weight)
		}
		classes[t.Weight] = append(classes[t.Weight], t.Text)
	}

	acc := s.accumulators.Get().(*accumulator)
	defer s.release(acc)
	for _, w := range weights {
		for _, text := range classes[w] {
			id, ok := s.terms[queryKey(text)]
			if !ok {
				continue
			}
			acc.classHit = s.entries.addTo(id, acc.class, acc.classSeen, acc.classHit)
		}
		for _, d := range acc.classHit {
			score := acc.class[d]
			if w < knowledge.WeightOriginal {
				score = saturate(score)
			}
			if !acc.seen[d] {
				acc.seen[d] = true
				acc.totHit = append(acc.totHit, d)
			}
			acc.total[d] += w * score
			acc.class[d], acc.classSeen[d] = 0, false
		}
		acc.classHit = acc.classHit[:0]
	}

	s.addSituations(acc, classes[knowledge.WeightOriginal])

	// The best `limit` by score, then by token (entities are in token
	// order), kept in a small heap: the worst of the best at the root.
	better := func(a, b uint32) bool {
		if acc.total[a] != acc.total[b] {
			return acc.total[a] > acc.total[b]
		}
		return a < b
	}
	top := make([]uint32, 0, limit)
	for _, d := range acc.totHit {
		if q.Type != "" && s.docs[d].entity.Type != q.Type {
			continue
		}
		if len(top) < limit {
			top = append(top, d)
			for i := len(top) - 1; i > 0; {
				parent := (i - 1) / 2
				if !better(top[parent], top[i]) {
					break
				}
				top[parent], top[i] = top[i], top[parent]
				i = parent
			}
			continue
		}
		if !better(d, top[0]) {
			continue
		}
		top[0] = d
		for i := 0; ; {
			worst, l, r := i, 2*i+1, 2*i+2
			if l < len(top) && better(top[worst], top[l]) {
				worst = l
			}
			if r < len(top) && better(top[worst], top[r]) {
				worst = r
			}
			if worst == i {
				break
			}
			top[i], top[worst] = top[worst], top[i]
			i = worst
		}
	}
	slices.SortFunc(top, func(a, b uint32) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	out := make([]assistant.SearchResult, len(top))
	for i, d := range top {
		out[i] = assistant.SearchResult{Entity: s.docs[d].entity, Score: acc.total[d]}
	}
	return out
}

// industryWeight is what a query word that only names the industry the
// question is asked in (SearchQuery.Industry) counts for, against 1 for
// the query's other words: like a vocabulary expansion, it breaks ties
// between entities the question's own words leave close. Its class is
// saturated as the expansions' are, and it takes no part in matching
// situations.
const industryWeight = 0.25

// situationShare is the share of an entity's score that comes from the
// one of its "When to use" situations (read with its title) closest to a
// long query's own words, by BM25 over all situations, scaled so that the
// query's best situation counts as much as its best entity score; a query
// of fewer than situationsFrom distinct words of its own is ranked on
// whole entities only.
//
// A user who describes a situation at length shares scattered words with
// many entities (a machine shop's "second shift" with call-centre
// shifts), and the entity with one situation much like the description is
// likelier to be written for it. A short query names what it wants, and
// whole entities rank it well already. On the 320 labelled blind questions
// of eval/retrieval_blind_*.tsv (docs/evaluation.md, "Twelfth session"),
// this raised the reciprocal rank of the reader's first choice from 0.44
// to 0.50 and from 0.46 to 0.49 on the two halves of the sets, and of any
// labelled entry from 0.61 to 0.68 and from 0.60 to 0.64; the short
// development queries (retrieval_dev, retrieval_dev_hard and every set of
// new entities) rank as before.
const (
	situationShare = 0.35
	situationsFrom = 10
)

// addSituations mixes each entity's best situation score into its total
// (situationShare), for a query of at least situationsFrom terms of its
// own (originals).
func (s *Snapshot) addSituations(acc *accumulator, originals []string) {
	if len(s.lineEntity) == 0 || len(originals) < situationsFrom {
		return
	}
	for _, text := range originals {
		id, ok := s.terms[queryKey(text)]
		if !ok {
			continue
		}
		acc.lineHit = s.lines.addTo(id, acc.line, acc.lineSeen, acc.lineHit)
	}
	// The best line of each entity, kept in class (all zero between
	// classes), and the best of all.
	bestLine := 0.0
	for _, l := range acc.lineHit {
		d := s.lineEntity[l]
		acc.class[d] = max(acc.class[d], acc.line[l])
		bestLine = max(bestLine, acc.line[l])
		acc.line[l], acc.lineSeen[l] = 0, false
	}
	bestTotal := 0.0
	for _, d := range acc.totHit {
		bestTotal = max(bestTotal, acc.total[d])
	}
	for _, d := range acc.totHit {
		if bestLine > 0 {
			acc.total[d] = (1-situationShare)*acc.total[d] + situationShare*bestTotal*acc.class[d]/bestLine
		}
	}
	// Every line's entity is among those the query touched (a line's
	// words are its entity's too), but the best-line scores are cleared
	// by line all the same, so that none can outlive the search.
	for _, l := range acc.lineHit {
		acc.class[s.lineEntity[l]] = 0
	}
	acc.lineHit = acc.lineHit[:0]
}

// release clears what the search used and returns the accumulator.
func (s *Snapshot) release(acc *accumulator) {
	for _, d := range acc.totHit {
		acc.total[d], acc.seen[d] = 0, false
	}
	acc.totHit = acc.totHit[:0]
	s.accumulators.Put(acc)
}
