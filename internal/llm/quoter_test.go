package llm_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/builtin"
)

// The builtin's answers are quotations, and the wrappers say so for it;
// a hosted provider's are not.
func TestQuotesOnlyThroughWrappers(t *testing.T) {
	m := llm.NewMetrics(prometheus.NewRegistry())
	for name, p := range map[string]llm.Provider{
		"builtin":             builtin.New(),
		"traced builtin":      llm.Traced(builtin.New(), "builtin"),
		"instrumented traced": m.Instrument(llm.Traced(builtin.New(), "builtin"), "builtin"),
	} {
		if !llm.QuotesOnly(p) {
			t.Errorf("%s: QuotesOnly false, want true", name)
		}
	}
	if llm.QuotesOnly(m.Instrument(llm.Traced(fakeProvider{}, "m"), "m")) {
		t.Error("a provider that writes its own answers: QuotesOnly true, want false")
	}
}
