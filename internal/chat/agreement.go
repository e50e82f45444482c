package chat

import (
	"context"

	"github.com/constraintlab/assistant/internal/assistant"
)

// searchAgreement says how highly a plain search of the user's own message
// ranks the knowledge the answer cites, 0 to 1, or -1 when the answer
// cites nothing or the search finds nothing.
//
// The turn chooses what to read from searches shaped by the persona's
// angle, the situation it recognised and the diagnosis; the answer is then
// built on what was read. A second, independent look at the question, the
// retriever's ranking of the message as the user wrote it, says whether
// the knowledge the answer leans on is also what the question alone points
// to. For each cited entity we take the reciprocal of its rank among the
// first agreementDepth results (1 for the first, 1/2 for the second, 0
// when it is not among them), and average over the cited entities, each
// counted as often as the answer cites it.
//
// On the 368 rated in-scope answers of the twelfth session's last eight
// blind sets, this ranked answers by usefulness with a Spearman
// correlation of 0.50, against 0.43 for the confidence score, and scaling
// the relevance by it raised the score's correlation on every one of the
// eight sets (docs/evaluation.md, "Thirteenth session").
func (s *Service) searchAgreement(ctx context.Context, question string, industry []string, cited []assistant.Token, times map[assistant.Token]int) (float64, error) {
	if len(cited) == 0 {
		return -1, nil
	}
	hits, err := s.Retriever.Search(ctx, assistant.SearchQuery{Text: question, Limit: agreementDepth, Industry: industry})
	if err != nil || len(hits) == 0 {
		return -1, err
	}
	var sum, count float64
	for _, t := range cited {
		n := float64(times[t])
		count += n
		for i, h := range hits {
			if h.Entity.Token() == t {
				sum += n / float64(i+1)
				break
			}
		}
	}
	if count == 0 {
		return -1, nil
	}
	return sum / count, nil
}

// agreementDepth is how many results of the plain search are looked at.
const agreementDepth = 10
