package diagnose

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/constraintlab/assistant/internal/assistant"
)

// The matcher is a BM25F classifier with one "document" per archetype made
// of weighted fields, plus the best single symptom phrase:
//
//   - symptoms: the archetype's symptom phrases, name and description;
//   - keywords: its keywords;
//   - metrics: its revealing metrics and every vertical's metrics for it;
//   - knowledge: the knowledge entities tagged with it (title, tags, when to
//     use, key ideas), weighted by where the archetype sits in the entity's
//     list;
//   - vertical: the asking vertical's own metrics and first moves for it.
//
// Term statistics (idf) come from every sentence of that material, so a word
// that occurs in few phrases weighs more. Scores become probabilities with a
// softmax whose temperature was set on the development sets; the top
// probability is the confidence.
type params struct {
	k1, b                                     float64
	wSymptom, wKeyword, wMetric, wKnow, wVert float64
	wPhrase                                   float64
	bigram                                    float64 // weight of bigram features relative to unigrams
	temperature                               float64
}

var defaultParams = params{
	k1: 1.2, b: 0.3,
	wSymptom: 1.0, wKeyword: 1.0, wMetric: 0.6, wKnow: 0.15, wVert: 1.2,
	wPhrase: 6.0, bigram: 1.0, temperature: 3.0,
}

const (
	fSymptom = iota
	fKeyword
	fMetric
	fKnow
	numFields
)

type bag map[string]float64

func (b bag) add(an *analyzer, text string, w float64) float64 {
	n := 0.0
	for _, t := range an.terms(text) {
		b[t] += w
		n += w
	}
	return n
}

type phrase struct {
	text  string
	terms map[string]bool
	norm  float64
}

// archetypeIndex is the material of one archetype while the index is
// built; scoring reads the features compiled from it.
type archetypeIndex struct {
	fields   [numFields]bag
	lengths  [numFields]float64
	vertical map[string]bag // by vertical id
	vertLen  map[string]float64
	phrases  []phrase
}

type index struct {
	p       params
	idf     map[string]float64
	ids     []string
	avgLen  [numFields]float64
	avgVert float64
	an      *analyzer

	// features holds, for every term of the material, what it adds to
	// each archetype's score, and phrases every symptom phrase, by
	// archetype in catalog order (archetype i's are phrases[phraseStart[i]:
	// phraseStart[i+1]]). Both are computed once by compile, so a
	// diagnosis looks each of its terms up once instead of once per
	// archetype, field and phrase.
	features    map[string]*feature
	phrases     []phrase
	phraseStart []int
}

// feature is one term's part in scoring: its weight and, for the
// archetypes whose material has it, its BM25F term frequency (the
// field-weighted, length-normalised sum over the fixed fields, and
// separately the asking vertical's own field), and the symptom phrases
// that contain it.
type feature struct {
	weight   float64
	tf       []archetypeTF
	vertical map[string][]archetypeTF // by vertical id
	phrases  []int                    // positions in index.phrases
}

// archetypeTF is a term frequency component of one archetype (its
// position in index.ids).
type archetypeTF struct {
	arch int
	tf   float64
}

func buildIndex(cat *Catalog, c *Content, entities []assistant.Entity, p params) *index {
	ix := &index{p: p, ids: slices.Clone(assistant.ArchetypeIDs), an: newAnalyzer(c.Concepts)}
	var arch []*archetypeIndex
	df := map[string]int{}
	nDocs := 0
	sentence := func(text string) {
		nDocs++
		seen := map[string]bool{}
		for _, t := range ix.an.terms(text) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	names := map[string]Item{}
	for _, it := range cat.Archetypes {
		names[it.ID] = it
	}
	for _, id := range ix.ids {
		a := c.Archetypes[id]
		ai := &archetypeIndex{vertical: map[string]bag{}, vertLen: map[string]float64{}}
		for f := range ai.fields {
			ai.fields[f] = bag{}
		}
		add := func(f int, text string, w float64) {
			ai.lengths[f] += ai.fields[f].add(ix.an, text, w)
			sentence(text)
		}
		add(fSymptom, names[id].Name, 1)
		add(fSymptom, names[id].Description, 1)
		for _, s := range a.Symptoms {
			add(fSymptom, s, 1)
			ai.phrases = append(ai.phrases, phrase{text: s})
		}
		for _, k := range a.Keywords {
			add(fKeyword, k, 1)
		}
		for _, m := range a.Metrics {
			add(fMetric, m, 1)
		}
		for _, vid := range assistant.VerticalIDs {
			va := c.Verticals[vid].Archetypes[id]
			vb := bag{}
			for _, m := range va.Metrics {
				add(fMetric, m, 0.5)
				ai.vertLen[vid] += vb.add(ix.an, m, 1)
			}
			for _, m := range va.Moves {
				ai.vertLen[vid] += vb.add(ix.an, m, 1)
				sentence(m)
			}
			for _, s := range va.Signals {
				ai.vertLen[vid] += vb.add(ix.an, s, 1)
				add(fKeyword, s, 0.3)
			}
			ai.vertical[vid] = vb
		}
		for _, e := range entities {
			pos := slices.Index(e.Archetypes, id)
			if pos < 0 {
				continue
			}
			w := 1 / float64(1+pos)
			add(fKnow, e.Title, w)
			add(fKnow, strings.Join(e.Tags, " "), w)
			for _, s := range e.WhenToUse {
				add(fKnow, s, w)
			}
			for _, s := range e.KeyIdeas {
				add(fKnow, s, w*0.5)
			}
		}
		arch = append(arch, ai)
	}
	ix.idf = make(map[string]float64, len(df))
	for t, n := range df {
		ix.idf[t] = math.Log(1 + (float64(nDocs)-float64(n)+0.5)/(float64(n)+0.5))
	}
	for f := 0; f < numFields; f++ {
		for _, ai := range arch {
			ix.avgLen[f] += ai.lengths[f] / float64(len(arch))
		}
	}
	cnt := 0.0
	for _, ai := range arch {
		for _, l := range ai.vertLen {
			ix.avgVert += l
			cnt++
		}
	}
	ix.avgVert /= cnt
	for _, ai := range arch {
		for i := range ai.phrases {
			ph := &ai.phrases[i]
			ph.terms = map[string]bool{}
			for _, t := range ix.an.terms(ph.text) {
				if !ph.terms[t] {
					ph.terms[t] = true
					w := ix.weight(t)
					ph.norm += w * w
				}
			}
			ph.norm = math.Sqrt(ph.norm)
		}
	}
	ix.compile(arch)
	return ix
}

// compile computes the features and the phrase table from the material of
// each archetype (arch, in catalog order). Each frequency is computed
// with the very operations, in the very order, scoring used to perform
// per diagnosis, so scores are unchanged to the last bit.
func (ix *index) compile(arch []*archetypeIndex) {
	p := ix.p
	fw := [numFields]float64{p.wSymptom, p.wKeyword, p.wMetric, p.wKnow}
	ix.features = make(map[string]*feature, len(ix.idf))
	featureOf := func(t string) *feature {
		f := ix.features[t]
		if f == nil {
			f = &feature{weight: ix.weight(t)}
			ix.features[t] = f
		}
		return f
	}
	for i, ai := range arch {
		// The terms of the fixed fields, each once.
		terms := map[string]bool{}
		for f := 0; f < numFields; f++ {
			for t := range ai.fields[f] {
				terms[t] = true
			}
		}
		for t := range terms {
			tf := 0.0
			for f := 0; f < numFields; f++ {
				if x := ai.fields[f][t]; x > 0 {
					tf += fw[f] * x / (1 - p.b + p.b*ai.lengths[f]/ix.avgLen[f])
				}
			}
			if tf > 0 {
				ft := featureOf(t)
				ft.tf = append(ft.tf, archetypeTF{i, tf})
			}
		}
		for _, vid := range assistant.VerticalIDs {
			for t, x := range ai.vertical[vid] {
				if x > 0 {
					ft := featureOf(t)
					if ft.vertical == nil {
						ft.vertical = map[string][]archetypeTF{}
					}
					ft.vertical[vid] = append(ft.vertical[vid], archetypeTF{i, p.wVert * x / (1 - p.b + p.b*ai.vertLen[vid]/ix.avgVert)})
				}
			}
		}
		ix.phraseStart = append(ix.phraseStart, len(ix.phrases))
		for _, ph := range ai.phrases {
			for t := range ph.terms {
				ft := featureOf(t)
				ft.phrases = append(ft.phrases, len(ix.phrases))
			}
			ph.terms = nil // in the features now
			ix.phrases = append(ix.phrases, ph)
		}
	}
	ix.phraseStart = append(ix.phraseStart, len(ix.phrases))
}

// weight is the idf of a feature, scaled down for bigrams.
func (ix *index) weight(t string) float64 {
	w := ix.idf[t]
	if strings.Contains(t, "_") {
		w *= ix.p.bigram
	}
	return w
}

// scored is one archetype's raw score and the phrase that matched best.
type scored struct {
	i        int
	score    float64
	evidence string
}

// scoreBuffers are the buffers score reuses across calls; a free one has
// every dot at zero and an empty q.
type scoreBuffers struct {
	q             map[string]bool
	qterms        []string
	sums, tf      []float64
	dots          []float64
	touchedPhrase []int
}

var scoreBufferPool = sync.Pool{New: func() any { return &scoreBuffers{q: map[string]bool{}} }}

func (ix *index) score(text, vertical string) []scored {
	buf := scoreBufferPool.Get().(*scoreBuffers)
	defer func() {
		for _, j := range buf.touchedPhrase {
			buf.dots[j] = 0
		}
		buf.touchedPhrase, buf.qterms = buf.touchedPhrase[:0], buf.qterms[:0]
		clear(buf.q)
		scoreBufferPool.Put(buf)
	}()
	q, qterms := buf.q, buf.qterms
	for _, t := range ix.an.terms(text) {
		if !q[t] {
			q[t] = true
			qterms = append(qterms, t)
		}
	}
	qnorm := 0.0
	for _, t := range qterms {
		w := ix.weight(t)
		qnorm += w * w
	}
	qnorm = math.Sqrt(qnorm)
	p := ix.p
	n := len(ix.ids)
	// Per archetype: the BM25F sum, and the term frequency of the term at
	// hand; per phrase, the dot product with the query. Each sum takes its
	// terms in query order, as when archetypes were scored one by one.
	buf.qterms = qterms
	sums, tf := floatsOf(&buf.sums, n), floatsOf(&buf.tf, n)
	clear(sums)
	if len(buf.dots) < len(ix.phrases) {
		buf.dots = make([]float64, len(ix.phrases))
	}
	dots := buf.dots
	for _, t := range qterms {
		f := ix.features[t]
		if f == nil || f.weight == 0 {
			continue
		}
		idf := f.weight
		clear(tf)
		for _, a := range f.tf {
			tf[a.arch] = a.tf
		}
		for _, a := range f.vertical[vertical] {
			tf[a.arch] += a.tf
		}
		for i, x := range tf {
			if x > 0 {
				sums[i] += idf * x / (p.k1 + x)
			}
		}
		if qnorm > 0 {
			w := f.weight
			for _, ph := range f.phrases {
				dots[ph] += w * w
			}
			buf.touchedPhrase = append(buf.touchedPhrase, f.phrases...)
		}
	}
	out := make([]scored, n)
	for i := range out {
		best, evidence := 0.0, ""
		if qnorm > 0 {
			for j := ix.phraseStart[i]; j < ix.phraseStart[i+1]; j++ {
				ph := &ix.phrases[j]
				dot := dots[j]
				if dot == 0 || ph.norm == 0 {
					continue
				}
				if sim := dot / (qnorm * ph.norm); sim > best {
					best, evidence = sim, ph.text
				}
			}
		}
		out[i] = scored{i: i, score: sums[i] + p.wPhrase*best, evidence: evidence}
	}
	return out
}

// floatsOf returns n floats in buf's storage (not cleared).
func floatsOf(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	*buf = (*buf)[:n]
	return *buf
}
