package deploy_test

import (
	"strconv"
	"strings"
	"testing"
)

// soakPeakMiB is the peak resident memory of one instance in the 10-minute
// soak with the default corpus (docs/performance.md, "Memory under varied
// load"), and limitHeadroom the share of a limit that figure may take: the
// Go memory limit is 90% of the container's (serve follows the cgroup
// limit), and what the collector does not count (thread stacks, the
// binary) lives in the rest.
const (
	soakPeakMiB   = 315
	limitHeadroom = 0.75
)

// mebibytes reads a memory quantity as Kubernetes (512Mi, 1Gi) or
// compose (512M, 1g: binary units) writes it.
func mebibytes(t *testing.T, q string) float64 {
	t.Helper()
	units := map[string]float64{"Ki": 1.0 / 1024, "Mi": 1, "Gi": 1024, "k": 1.0 / 1024, "m": 1, "g": 1024, "K": 1.0 / 1024, "M": 1, "G": 1024}
	for _, suffix := range []string{"Ki", "Mi", "Gi", "k", "m", "g", "K", "M", "G"} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				t.Fatalf("memory quantity %q: %v", q, err)
			}
			return v * units[suffix]
		}
	}
	t.Fatalf("memory quantity %q has no unit", q)
	return 0
}

// checkLimit holds a container's memory limit to the soak: the soak's peak
// fits in limitHeadroom of it, and it is no larger than twice what that
// needs (a limit far above the need hides a leak until the node runs
// short).
func checkLimit(t *testing.T, where, limit string, env map[string]string) {
	t.Helper()
	if limit == "" {
		t.Errorf("%s: no memory limit", where)
		return
	}
	mib := mebibytes(t, limit)
	need := soakPeakMiB / limitHeadroom
	if mib < need || mib > 2*need {
		t.Errorf("%s: memory limit %s (%.0f MiB); the soak's peak of %d MiB wants %.0f to %.0f MiB", where, limit, mib, soakPeakMiB, need, 2*need)
	}
	if v, ok := env["GOMEMLIMIT"]; ok {
		t.Errorf("%s sets GOMEMLIMIT=%s: the service sets it from the container's limit", where, v)
	}
}

func TestMemoryLimits(t *testing.T) {
	compose := readYAML(t, "compose.yaml")[0]
	env := map[string]string{}
	for k, v := range get(t, compose, "services", "assistant", "environment").(map[string]any) {
		env[k], _ = v.(string)
	}
	checkLimit(t, "compose.yaml", str(t, compose, "services", "assistant", "deploy", "resources", "limits", "memory"), env)

	var dep map[string]any
	for _, doc := range readYAML(t, "k8s/deployment.yaml") {
		if str(t, doc, "kind") == "Deployment" {
			dep = doc
		}
	}
	container := get(t, dep, "spec", "template", "spec", "containers", 0)
	env = map[string]string{}
	for _, e := range get(t, container, "env").([]any) {
		env[str(t, e, "name")] = ""
	}
	limit := str(t, container, "resources", "limits", "memory")
	checkLimit(t, "k8s/deployment.yaml", limit, env)
	if request := str(t, container, "resources", "requests", "memory"); request == "" || mebibytes(t, request) > mebibytes(t, limit) {
		t.Errorf("k8s/deployment.yaml: memory request %q, want one within the limit %s", request, limit)
	}
}
