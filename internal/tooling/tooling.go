// Package tooling is the contract between the chat turn and every model,
// the builtin one included: the names of the tools the model may call and
// the JSON shapes of their arguments and results. internal/chat runs the
// tools and writes these results; internal/llm/builtin reads them to plan
// and compose its answer. Neither imports the other.
//
// It depends on the standard library only.
package tooling

import (
	"cmp"
	"slices"
	"strings"
)

// Tool names the model may call.
const (
	ToolSearch   = "search_knowledge"
	ToolEntity   = "get_entity"
	ToolDiagnose = "diagnose_constraint"
)

// The JSON shapes of tool arguments and results. They are the contract
// between the chat loop and every model, the builtin one included.

// SearchArgs are the arguments of search_knowledge.
type SearchArgs struct {
	Query string `json:"query"`
	Type  string `json:"type,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// SearchHit is one result of search_knowledge.
type SearchHit struct {
	Token      string   `json:"token"`
	Title      string   `json:"title"`
	Summary    string   `json:"summary"`
	Archetypes []string `json:"archetypes"`
	// WhenToUse are the situations the entity is written for, in a
	// user's words (its card's "When to use").
	WhenToUse []string `json:"when_to_use,omitempty"`
	Score     float64  `json:"score"`
	// Imported is true for the workspace's own knowledge (kb import),
	// such as the product's help articles.
	Imported bool `json:"imported,omitempty"`
}

// SearchResult is the result of search_knowledge.
type SearchResult struct {
	Query string      `json:"query"`
	Hits  []SearchHit `json:"hits"`
	// Coverage is the share of the query's content words that the hits'
	// text contains, 0 to 1: how much of the question the knowledge base
	// speaks to (low for trivia, recipes and small talk).
	Coverage float64 `json:"coverage"`
	// Missing lists the query's content words that no hit contains.
	Missing []string `json:"missing,omitempty"`
	// Scope is whether the user's question (not this query) is one the
	// knowledge base can answer (D29).
	Scope Scope `json:"scope"`
}

// EntityArgs are the arguments of get_entity.
type EntityArgs struct {
	Token string `json:"token"`
}

// EntityResult is the result of get_entity: the whole entity.
type EntityResult struct {
	Token      string   `json:"token"`
	Found      bool     `json:"found"`
	Title      string   `json:"title,omitempty"`
	Authors    []string `json:"authors,omitempty"`
	Year       *int     `json:"year,omitempty"`
	Summary    string   `json:"summary,omitempty"`
	KeyIdeas   []string `json:"key_ideas,omitempty"`
	WhenToUse  []string `json:"when_to_use,omitempty"`
	Pitfalls   []string `json:"pitfalls,omitempty"`
	Archetypes []string `json:"archetypes,omitempty"`
	Related    []string `json:"related,omitempty"`
	// Presumes lists, for an entity written for one precondition (a
	// champion who has left, a customer who has cancelled), the phrases
	// that show it: used for a question that shows none of them, it
	// answers a situation the asker is not in (knowledge.Premises).
	Presumes []string `json:"presumes,omitempty"`
}

// DiagnoseArgs are the arguments of diagnose_constraint.
type DiagnoseArgs struct {
	Description string `json:"description"`
	Vertical    string `json:"vertical,omitempty"`
}

// DiagnoseResult is the result of diagnose_constraint: the ranked
// archetypes and, for the most likely one, the framework applications in
// the vertical's terms.
type DiagnoseResult struct {
	Vertical     string             `json:"vertical,omitempty"`
	Confidence   float64            `json:"confidence"`
	Band         string             `json:"band"`
	Matches      []DiagnoseMatch    `json:"matches"`
	Applications []DiagnoseApplying `json:"applications"`
	Metrics      []string           `json:"metrics,omitempty"`
}

// DiagnoseMatch is one ranked archetype.
type DiagnoseMatch struct {
	ArchetypeID string  `json:"archetype_id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Probability float64 `json:"probability"`
	Evidence    string  `json:"evidence,omitempty"`
}

// DiagnoseApplying is one framework applied to the top archetype.
type DiagnoseApplying struct {
	Token       string   `json:"token"`
	Title       string   `json:"title"`
	Application string   `json:"application"`
	FirstSteps  []string `json:"first_steps"`
	Metrics     []string `json:"metrics"`
	Supporting  []string `json:"supporting"`
	// CardApplication and CardFirstSteps are the same application in the
	// neutral words the framework's card shows (/resolve), when the
	// vertical's words differ: what an answer cites so a reader can check
	// it on hover.
	CardApplication string   `json:"card_application,omitempty"`
	CardFirstSteps  []string `json:"card_first_steps,omitempty"`
}

// Scope is the service's reading of whether a question is one the
// knowledge base can answer (D29): a question about running a business, or
// not (trivia, recipes, small talk, programming...). search_knowledge
// returns it with its hits so that every model, the builtin one included,
// declines on the same evidence.
type Scope struct {
	InScope bool `json:"in_scope"`
	// Business lists the question's words that place it in running a
	// business; OffTopic those that place it elsewhere.
	Business []string `json:"business_words,omitempty"`
	OffTopic []string `json:"off_topic_words,omitempty"`
	// Language is "en", another language's code, or "other" (D29: the
	// assistant answers in English and says so).
	Language string `json:"language"`
	// Understood lists, for a question in another language, the business
	// words the assistant understood, in English.
	Understood []string `json:"understood,omitempty"`
	// FollowUp is true when the question alone names no business but the
	// conversation before it did, and nothing in it is off topic.
	FollowUp bool `json:"follow_up,omitempty"`
	// Workspace is true when the question is in scope because the
	// workspace's own imported knowledge (a help article, say) answers
	// it, whatever the word lists say.
	Workspace bool `json:"workspace_knowledge,omitempty"`
	// Care names a subject the assistant never advises on, whatever
	// business words surround it: health, law, tax, personal-finance,
	// job-application or code ("" for none). Such a question is out of
	// scope; CareSubject names the subject to open the decline ("A
	// person's health"), and CareNote is the one plain sentence to say
	// about it (for health: to get medical help), "" when there is none.
	// CareUrgent is true for a subject where someone may need help now (a
	// person's health or safety): the note then comes first and the
	// decline says nothing else of what the assistant does.
	Care        string `json:"care,omitempty"`
	CareSubject string `json:"care_subject,omitempty"`
	CareNote    string `json:"care_note,omitempty"`
	CareUrgent  bool   `json:"care_urgent,omitempty"`
	// Injection is true when the message tries to change the assistant's
	// instructions or role or to reveal its configuration.
	Injection bool `json:"injection,omitempty"`
}

// Reading is the turn's one reading of the question: made once by the
// chat turn from the message, the history, the mode and the vertical, and
// shared by the tools, the builtin model and the confidence (the
// answer's relevance is measured against its key terms). Nothing else
// reads the question's text again.
type Reading struct {
	// Question is the user's message as written.
	Question string `json:"question"`
	// Search is what the tools should look for: the question in English
	// business words, without what was already tried, with the earlier
	// user turn when the question leans on it.
	Search string `json:"search"`
	// Asks is, in a follow-up, what the message itself asks (its own
	// words, without what was tried), when it says enough to be searched
	// alone: the new facts are what a follow-up asks about most, and a
	// search of the whole conversation is led by the earlier question.
	// "" otherwise.
	Asks  string `json:"asks,omitempty"`
	Scope Scope  `json:"scope"`
	// Situation is the id of the persona's situation the question shows
	// ("" for none), and SituationTerms the words that select the
	// knowledge that fits it.
	Situation      string `json:"situation,omitempty"`
	SituationTerms string `json:"situation_terms,omitempty"`
	// FollowUp is true when the conversation has earlier turns; Tried
	// when the conversation says what was already tried, and TriedTerms
	// are the stems of that: the answer leaves it aside.
	FollowUp   bool     `json:"follow_up,omitempty"`
	Tried      bool     `json:"tried,omitempty"`
	TriedTerms []string `json:"tried_terms,omitempty"`
	// KeyTerms are what the question asks about, weighted: what an answer
	// must address to be relevant.
	KeyTerms []KeyTerm `json:"key_terms"`
	// Names are the names of a source the message asks to have confirmed
	// or cited (capitalised words, as written): the answer addresses them
	// or says the knowledge base does not hold them.
	Names []string `json:"names,omitempty"`
	// HowTo is true when the question asks how to do something in a
	// product ("how do I export invoices to CSV"): only the product's own
	// documentation can answer it.
	HowTo bool `json:"how_to,omitempty"`
	// Unknown lists citation tokens the user wrote that the knowledge
	// base does not hold.
	Unknown []string `json:"unknown_tokens,omitempty"`
}

// KindStems appends to dst the stems of the key terms that name a kind of
// business, and returns it.
func (r Reading) KindStems(dst []string) []string {
	for _, k := range r.KeyTerms {
		if k.Kind {
			dst = append(dst, k.Stem)
		}
	}
	return dst
}

// SourceNames are the names of the source the message asked to have
// confirmed that can be looked for: four letters or more, without a
// possessive 's, each once.
func (r Reading) SourceNames() []string {
	var names []string
	for _, n := range r.Names {
		n = strings.TrimSuffix(strings.TrimSuffix(n, "'s"), "’s")
		if len([]rune(n)) > 3 && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// SourceText is the text of an entity in which a source's names are
// looked for (UnconfirmedNames): its title, authors and summary.
func SourceText(title string, authors []string, summary string) string {
	return title + " " + strings.Join(authors, " ") + " " + summary
}

// UnconfirmedNames are the source names (Reading.SourceNames) that the
// knowledge does not confirm, given each entity's SourceText: the names no entity holds (the made-up study's
// author, not the university), or all of them when each is somewhere but
// no one entity holds them together (one name is not enough: "the 2021
// Harvard study by Dr. Ellen Marks" is not the Harvard Negotiation
// Project's book). nil when there is no name or one entity holds them all.
// Names are compared without regard to case.
func UnconfirmedNames(names, texts []string) []string {
	if len(names) == 0 {
		return nil
	}
	lower := make([]string, len(texts))
	for i, t := range texts {
		lower[i] = strings.ToLower(t)
	}
	lowerNames := make([]string, len(names))
	for i, n := range names {
		lowerNames[i] = strings.ToLower(n)
	}
	var missing []string
	for i, n := range lowerNames {
		if !slices.ContainsFunc(lower, func(text string) bool { return strings.Contains(text, n) }) {
			missing = append(missing, names[i])
		}
	}
	if len(missing) > 0 {
		return missing
	}
	if slices.ContainsFunc(lower, func(text string) bool {
		return !slices.ContainsFunc(lowerNames, func(n string) bool { return !strings.Contains(text, n) })
	}) {
		return nil // one entity holds every name
	}
	return names
}

// KeyTerm is one stem of what the question asks about, with its weight:
// 1 for a word that names something of a business, less for an ordinary
// word or one that names an industry; and its specificity to the
// knowledge base: 0 for a word every entity uses, 1 for one that none or
// one uses.
type KeyTerm struct {
	Stem        string  `json:"stem"`
	Word        string  `json:"word"`
	Weight      float64 `json:"weight"`
	Specificity float64 `json:"specificity"`
	// Names says what the word names: NamesBusiness (something of a
	// business: a customer, a margin, a backlog), NamesIndustry (the
	// industry the question is in), or "" for an ordinary word. Its Weight
	// starts from that (BusinessWeight, IndustryWeight, OrdinaryWeight)
	// and may be lowered later (a follow-up's earlier words weigh half).
	Names string `json:"names,omitempty"`
	// Kind is true for a word that names a kind of business ("bakery",
	// "plumber"; it names the industry as well). The turn's searches weigh
	// it lightly: named once in one entity's example, it would otherwise
	// pull that entity into every question from the industry.
	Kind bool `json:"kind,omitempty"`
	// Related are the concept phrases (each its words' stems) that the
	// business vocabulary relates the word to as the question uses it:
	// "cfo" relates to "economic buyer". Text that holds one of them
	// speaks to the term in the knowledge base's words, and counts for
	// half of it (relatedCredit).
	Related [][]string `json:"related,omitempty"`
	// Forms are the stems of the word's derivationally related forms
	// ("decid" for "decision"): text that holds one speaks to the term
	// in another part of speech, and counts for all of it.
	Forms []string `json:"forms,omitempty"`
}

// What a key term names, and the weight each starts with.
const (
	NamesBusiness  = "business"
	NamesIndustry  = "industry"
	BusinessWeight = 1.0
	IndustryWeight = 0.25
	OrdinaryWeight = 0.5
)

// relatedCredit is the share of a key term's importance that text holding
// one of its related concept phrases, and not the term itself, counts for.
const relatedCredit = 0.5

// holds reports how fully has finds the term: 1 for its stem or one of its
// forms, relatedCredit for all the stems of one of its related phrases,
// else 0.
func (k KeyTerm) holds(has func(stem string) bool) float64 {
	if has(k.Stem) || slices.ContainsFunc(k.Forms, has) {
		return 1
	}
	for _, phrase := range k.Related {
		if !slices.ContainsFunc(phrase, func(st string) bool { return !has(st) }) {
			return relatedCredit
		}
	}
	return 0
}

// Importance is what the term counts for in the answer's relevance: its
// weight, scaled by its specificity from a quarter (a word every entity
// uses) to all of it, so that an answer cannot look relevant by sharing
// only the words every entity shares.
func (k KeyTerm) Importance() float64 { return k.Weight * (0.25 + 0.75*k.Specificity) }

// Addressed returns the weighted share of the reading's key terms that
// has(stem) finds, 0 to 1 (a term found only through one of its related
// concept phrases counts for relatedCredit of its weight), and the words
// of those it does not find at all, weightiest first; 0 when there are no
// key terms.
func (r Reading) Addressed(has func(stem string) bool) (float64, []string) {
	return r.addressed(has, true)
}

// AddressedShare is Addressed's share alone, without listing the words
// not found.
func (r Reading) AddressedShare(has func(stem string) bool) float64 {
	share, _ := r.addressed(has, false)
	return share
}

func (r Reading) addressed(has func(stem string) bool, listMissing bool) (float64, []string) {
	if !listMissing {
		var total, found float64
		for _, k := range r.KeyTerms {
			total += k.Importance()
			if credit := k.holds(has); credit > 0 {
				found += credit * k.Importance()
			}
		}
		if total == 0 {
			return 0, nil
		}
		return found / total, nil
	}
	var total, found float64
	var missing []string
	weight := map[string]float64{}
	for _, k := range r.KeyTerms {
		total += k.Importance()
		if credit := k.holds(has); credit > 0 {
			found += credit * k.Importance()
		} else {
			missing = append(missing, k.Word)
			weight[k.Word] = k.Importance()
		}
	}
	slices.SortStableFunc(missing, func(a, b string) int { return cmp.Compare(weight[b], weight[a]) })
	if total == 0 {
		return 0, missing
	}
	return found / total, missing
}
