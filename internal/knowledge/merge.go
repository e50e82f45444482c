package knowledge

import (
	"github.com/constraintlab/assistant/internal/assistant"
)

// Merge lays the files of over on top of base, as an import does: it
// returns the files of base whose token no file of over has, followed by
// every file of over, and the files of over that replace one of base.
// Duplicates within over are kept, so that Validate reports them.
//
// The knowledge base as served is Merge(embedded, imported): an imported
// entity wins over the embedded one with its token.
func Merge(base, over []File) (merged, replacing []File) {
	inOver := map[assistant.Token]bool{}
	for _, f := range over {
		inOver[f.Entity.Token()] = true
	}
	inBase := map[assistant.Token]bool{}
	for _, f := range base {
		tok := f.Entity.Token()
		inBase[tok] = true
		if !inOver[tok] {
			merged = append(merged, f)
		}
	}
	for _, f := range over {
		if inBase[f.Entity.Token()] {
			replacing = append(replacing, f)
		}
	}
	return append(merged, over...), replacing
}
