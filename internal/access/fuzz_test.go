package access_test

import (
	"testing"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

// FuzzParseKey: ParseKey never panics; whatever it accepts has the D16
// shape, and its id is the 12 characters after the prefix.
func FuzzParseKey(f *testing.F) {
	good, _, _ := access.NewKey()
	for _, s := range []string{
		good, good[:60], good + "x", "sk_service_", "", "Bearer " + good,
		"sk_service_000000000000000000000000000000000000000000000000000",
		"sk_service_" + string(make([]byte, 50)), "sk_service_ééééééééééééééééééééééééé",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := access.ParseKey(s)
		if err != nil {
			if assistant.ErrorCode(err) != assistant.EUnauthorized {
				t.Fatalf("ParseKey(%q): error code %q", s, assistant.ErrorCode(err))
			}
			return
		}
		if len(s) != access.KeyLength || !keyPattern.MatchString(s) {
			t.Fatalf("ParseKey accepted %q, not of the D16 format", s)
		}
		if !access.ValidKeyID(id) || id != s[len(access.KeyPrefix):len(access.KeyPrefix)+12] {
			t.Fatalf("ParseKey(%q) = id %q", s, id)
		}
	})
}
