package verify_test

import (
	"strings"
	"testing"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/verify"
)

func entityBySlug(t *testing.T, slug string) assistant.Entity {
	t.Helper()
	for _, e := range embedded(t) {
		if e.Slug == slug {
			return e
		}
	}
	t.Fatalf("no entity %s", slug)
	return assistant.Entity{}
}

// TestIssueExamples: the two verdicts of issue 24 that word overlap got
// wrong.
func TestIssueExamples(t *testing.T) {
	c := verify.New()
	zero := entityBySlug(t, "reichheld-sasser-1990-zero-defections")
	v := checkOne(c, "Retained customers become less profitable over time, so firms should fund acquisition instead [paper:reichheld-sasser-1990-zero-defections].", zero)
	if v.Status != verify.Contradicted || v.Evidence == nil {
		t.Errorf("reversed claim: %s (%s, %.3f)", v.Status, v.Reason, v.Score)
	} else {
		t.Logf("reversed claim: %s: %s", v.Reason, v.Evidence.Snippet)
	}
	little := entityBySlug(t, "little-1961-queuing-formula")
	v = checkOne(c, "Little's law was proved by John Little in 1961 [paper:little-1961-queuing-formula].", little)
	if v.Status != verify.Verified {
		t.Errorf("proved/proof: %s (%s, %.3f)", v.Status, v.Reason, v.Score)
	}
}

// TestDirection: moves, negated moves and numbers on the wrong side of a
// bound are contradicted; the same claims the source's way are not.
func TestDirection(t *testing.T) {
	c := verify.New()
	year := 2004
	e := assistant.Entity{Type: "paper", Slug: "x-2004-churn", Title: "Churn", Year: &year, Authors: []string{"Ann Smith"},
		Summary: "Smith studied subscription firms. Monthly churn in the sample stayed at 2.5% for mature firms. " +
			"Shorter onboarding raised activation in every cohort. Support tickets fell after the redesign.",
		KeyIdeas: []string{"Firms that answer tickets faster keep more of their customers."}}
	cite := " [paper:x-2004-churn]."
	queues := assistant.Entity{Type: "framework", Slug: "queues", Title: "Queues", Summary: "Long queues drive churn among small customers."}
	cite2 := " [framework:queues]."
	forty := assistant.Entity{Type: "framework", Slug: "forty", Title: "Forty", Summary: "Firms that answer tickets faster keep 40 or more of their customers."}
	cite3 := " [framework:forty]."
	for _, tc := range []struct {
		text, want string
	}{
		{"Shorter onboarding raised activation in every cohort" + cite, verify.Verified},
		{"Shorter onboarding lowered activation in every cohort" + cite, verify.Contradicted},
		{"Shorter onboarding did not raise activation in every cohort" + cite, verify.Contradicted},
		{"Firms that answer tickets slower keep more of their customers" + cite, verify.Contradicted},
		{"Firms that answer tickets faster keep fewer of their customers" + cite, verify.Contradicted},
		{"Monthly churn in the sample stayed under 2% for mature firms" + cite, verify.Contradicted},
		{"Monthly churn in the sample stayed under 3% for mature firms" + cite, verify.Unsupported},
		{"Support tickets rose after the redesign" + cite, verify.Contradicted},
		{"Support tickets fell before the redesign" + cite, verify.Contradicted},
		{"Monthly churn in the sample stayed at most 2.5% for mature firms" + cite, verify.Verified},
		{"Firms that answer tickets faster keep 40 or more of their customers" + cite3, verify.Verified},
		{"Firms that answer tickets faster keep 40 or fewer of their customers" + cite3, verify.Contradicted},
		{"Long queues drive churn among small customers" + cite2, verify.Verified},
		{"Churn drives long queues among small customers" + cite2, verify.Contradicted},
	} {
		src := e
		if strings.HasSuffix(tc.text, cite2) {
			src = queues
		}
		if strings.HasSuffix(tc.text, cite3) {
			src = forty
		}
		v := checkOne(c, tc.text, src)
		if v.Status != tc.want {
			t.Errorf("%s: %s (%s, %.3f), want %s", tc.text, v.Status, v.Reason, v.Score, tc.want)
		}
	}
}
