package textproc

import "strings"

// americanSpelling rewrites a lowercase word's British spelling in the
// American one where the two differ in a regular way, so that both share
// one stem: the knowledge base is written in British English
// ("utilisation", "prioritise", "behaviour", "call centre"), and many users
// write American English ("utilization", "prioritize", "behavior", "call
// center"). The Snowball stemmer keeps the difference ("utilis" against
// "util"), so without this a question and the card written for it would
// not share the word.
//
// The rules are applied to every word alike, so a word spelt the same on
// both sides of the Atlantic may be rewritten too ("promise" to
// "promize"): that is harmless, since the question and the knowledge go
// through the same rewriting and only the shared stem is ever compared.
func americanSpelling(w string) string {
	if len(w) < 5 {
		return w
	}
	if us, ok := spellingWords[w]; ok {
		return us
	}
	for _, p := range spellingPrefixes {
		if strings.HasPrefix(w, p.uk) {
			return p.us + w[len(p.uk):]
		}
	}
	// -ise, -isation, -iser and their forms ("prioritised", "organisation")
	// become -ize..., and -yse becomes -yze ("analysed"), after a stem of at
	// least three letters ("raise" and "rise" stay as they are).
	for _, suffix := range iseSuffixes {
		if strings.HasSuffix(w, suffix) && len(w)-len(suffix) >= 4 {
			i := len(w) - len(suffix) // at the "s"
			if c := w[i-1]; c == 'i' || c == 'y' {
				return w[:i] + "z" + w[i+1:]
			}
		}
	}
	return w
}

// iseSuffixes are the endings of -ise and -yse words, from the "s" on.
var iseSuffixes = []string{"sations", "sation", "sers", "ser", "sing", "sed", "ses", "se"}

// spellingPrefixes are British word beginnings with their American
// spelling, for words whose inflections and derivations follow
// ("behavioural", "labourer", "centred", "catalogues").
var spellingPrefixes = []struct{ uk, us string }{
	{"behaviour", "behavior"}, {"labour", "labor"}, {"colour", "color"}, {"favour", "favor"},
	{"honour", "honor"}, {"neighbour", "neighbor"}, {"harbour", "harbor"}, {"rumour", "rumor"},
	{"endeavour", "endeavor"}, {"flavour", "flavor"}, {"humour", "humor"}, {"odour", "odor"},
	{"rigour", "rigor"}, {"vigour", "vigor"}, {"candour", "candor"}, {"savour", "savor"},
	{"centre", "center"}, {"metre", "meter"}, {"litre", "liter"}, {"theatre", "theater"},
	{"fibre", "fiber"}, {"calibre", "caliber"}, {"catalogue", "catalog"}, {"dialogue", "dialog"},
	{"programme", "program"}, {"licence", "license"}, {"defence", "defense"}, {"offence", "offense"},
	{"judgement", "judgment"}, {"practise", "practice"}, {"cheque", "check"},
}

// spellingWords are whole words whose British spelling the prefixes
// would rewrite wrongly ("centred" is not "center" + "d"). Pairs the
// stemmer already brings together ("enrolment", "fulfil", "metres") need
// no entry.
var spellingWords = map[string]string{"centred": "centered"}
