package diagnose

import (
	"math"
	"slices"
	"strings"

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
	arch    []*archetypeIndex
	avgLen  [numFields]float64
	avgVert float64
	an      *analyzer
}

func buildIndex(cat *Catalog, c *Content, entities []assistant.Entity, p params) *index {
	ix := &index{p: p, ids: slices.Clone(assistant.ArchetypeIDs), an: newAnalyzer(c.Concepts)}
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
		ix.arch = append(ix.arch, ai)
	}
	ix.idf = make(map[string]float64, len(df))
	for t, n := range df {
		ix.idf[t] = math.Log(1 + (float64(nDocs)-float64(n)+0.5)/(float64(n)+0.5))
	}
	for f := 0; f < numFields; f++ {
		for _, ai := range ix.arch {
			ix.avgLen[f] += ai.lengths[f] / float64(len(ix.arch))
		}
	}
	cnt := 0.0
	for _, ai := range ix.arch {
		for _, l := range ai.vertLen {
			ix.avgVert += l
			cnt++
		}
	}
	ix.avgVert /= cnt
	for _, ai := range ix.arch {
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
	return ix
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

func (ix *index) score(text, vertical string) []scored {
	q := map[string]bool{}
	var qterms []string
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
	fw := [numFields]float64{p.wSymptom, p.wKeyword, p.wMetric, p.wKnow}
	out := make([]scored, len(ix.arch))
	for i, ai := range ix.arch {
		s := 0.0
		for _, t := range qterms {
			idf := ix.weight(t)
			if idf == 0 {
				continue
			}
			tf := 0.0
			for f := 0; f < numFields; f++ {
				if x := ai.fields[f][t]; x > 0 {
					tf += fw[f] * x / (1 - p.b + p.b*ai.lengths[f]/ix.avgLen[f])
				}
			}
			if vb := ai.vertical[vertical]; vb != nil {
				if x := vb[t]; x > 0 {
					tf += p.wVert * x / (1 - p.b + p.b*ai.vertLen[vertical]/ix.avgVert)
				}
			}
			if tf > 0 {
				s += idf * tf / (p.k1 + tf)
			}
		}
		best, evidence := 0.0, ""
		if qnorm > 0 {
			for _, ph := range ai.phrases {
				dot := 0.0
				for _, t := range qterms {
					if ph.terms[t] {
						w := ix.weight(t)
						dot += w * w
					}
				}
				if dot == 0 || ph.norm == 0 {
					continue
				}
				if sim := dot / (qnorm * ph.norm); sim > best {
					best, evidence = sim, ph.text
				}
			}
		}
		out[i] = scored{i: i, score: s + p.wPhrase*best, evidence: evidence}
	}
	return out
}
