package assistant

import (
	"slices"
	"strings"
)

// The archetype and vertical ids of spec/catalog.md. They are part of the
// public interface and fixed; their names, descriptions and the rest of the
// catalog content live in internal/diagnose.

// ArchetypeIDs lists the constraint archetypes in catalog order.
var ArchetypeIDs = []string{
	"lead-generation", "sales-conversion", "pricing-margin", "activation",
	"retention-churn", "expansion", "delivery-capacity", "quality-rework",
	"cash-flow", "hiring-talent", "founder-bottleneck", "strategic-focus",
	"product-market-fit", "support-load",
}

// VerticalIDs lists the business verticals in catalog order.
var VerticalIDs = []string{
	"saas", "ecommerce", "agency", "marketplace", "professional-services",
	"manufacturing", "healthcare", "hospitality", "retail", "logistics",
	"fintech", "education", "construction",
}

// IsArchetype reports whether id is a catalog archetype id.
func IsArchetype(id string) bool { return slices.Contains(ArchetypeIDs, id) }

// IsVertical reports whether id is a catalog vertical id.
func IsVertical(id string) bool { return slices.Contains(VerticalIDs, id) }

// CheckVertical returns nil for a catalog vertical id and otherwise an
// EInvalid error whose message lists the allowed ids.
func CheckVertical(id string) error {
	if IsVertical(id) {
		return nil
	}
	return Errorf(EInvalid, "Unknown vertical %q. Allowed values: %s.", id, strings.Join(VerticalIDs, ", "))
}
