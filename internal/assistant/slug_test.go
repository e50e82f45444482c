package assistant_test

import (
	"regexp"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
)

// TestValidSlugIsThePattern: ValidSlug, read byte by byte, accepts what
// the pattern ^[a-z0-9_-]+$ matches and nothing else.
func TestValidSlugIsThePattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-z0-9_-]+$`)
	for _, s := range []string{"", "okrs", "theory-of-constraints", "a_b-9", "Okrs", "ok rs", "ok\n", "\nok", "é", "ok.rs", "-", "_", "ok/rs", "ok\x00"} {
		if got, want := assistant.ValidSlug(s), pattern.MatchString(s); got != want {
			t.Errorf("ValidSlug(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
