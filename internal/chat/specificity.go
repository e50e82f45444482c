package chat

import (
	"context"
	"math"
	"sync"
)

// specificity knows how specific each stem is to the knowledge base: a
// word most entities use ("team", "customer") says little of what a
// question asks; a word few or none use ("invoice", "csv") says a lot. It
// is the inverse document frequency of the stem over the entities, scaled
// to 0..1 (1 for a stem in no entity or one), worked out once per
// knowledge version. The zero value is ready; it is safe for concurrent
// use.
type specificity struct {
	mu      sync.Mutex
	version int64
	ready   bool
	idf     map[string]float64
	n       int
	// lookup is the function of returns for idf, made once per version.
	lookup func(stem string) float64
}

// of returns the specificity function of the knowledge as it is now.
func (sp *specificity) of(ctx context.Context, s *Service) (func(stem string) float64, error) {
	version, err := s.Knowledge.KnowledgeVersion(ctx)
	if err != nil {
		return nil, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.ready || sp.version != version {
		entities, err := s.Knowledge.AllEntities(ctx)
		if err != nil {
			return nil, err
		}
		df := map[string]int{}
		for _, e := range entities {
			for stem := range s.terms.terms(e) {
				df[stem]++
			}
		}
		n := len(entities)
		idf := make(map[string]float64, len(df))
		top := math.Log(float64(n+1) / 2) // the idf of a stem in one entity
		for stem, d := range df {
			if top > 0 {
				idf[stem] = math.Min(1, math.Log(float64(n+1)/float64(d+1))/top)
			}
		}
		sp.idf, sp.n, sp.version, sp.ready = idf, n, version, true
		sp.lookup = func(stem string) float64 {
			if v, ok := idf[stem]; ok {
				return v
			}
			return 1 // in no entity: as specific as a word can be
		}
	}
	return sp.lookup, nil
}
