package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/constraintlab/assistant/internal/config"
)

// settingExists reports whether name is a setting the service reads now.
func settingExists(name string) bool {
	for _, s := range config.Settings {
		if s.Env == name {
			return s.NotYet == ""
		}
	}
	return false
}

func readYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs
}

// get walks a parsed YAML document: keys for maps, ints for lists.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not a map", path)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: not a list of %d", path, k+1)
			}
			v = l[k]
		}
	}
	return v
}

func str(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, _ := get(t, v, path...).(string)
	return s
}

// servicePort is the port of the listen address the manifests give.
func servicePort(t *testing.T, addr string) string {
	t.Helper()
	_, port, ok := strings.Cut(addr, ":")
	if !ok || port == "" {
		t.Fatalf("ASSISTANT_ADDR %q has no port", addr)
	}
	return port
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"./cmd/assistant", "EXPOSE 8080", "ASSISTANT_ADDR=:8080", `CMD ["serve"]`, "USER nonroot"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^ENV (.*)$`).FindAllStringSubmatch(text, -1) {
		for _, kv := range strings.Fields(m[1]) {
			if name, _, _ := strings.Cut(kv, "="); !settingExists(name) {
				t.Errorf("Dockerfile sets %s, which is not a setting", name)
			}
		}
	}
}

// composeDefaults replaces compose's ${VAR:-default} by the default, as
// compose does when VAR is unset.
func composeDefaults(s string) string {
	return regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`).ReplaceAllString(s, "$1")
}

func TestCompose(t *testing.T) {
	doc := readYAML(t, "compose.yaml")[0]
	services, _ := get(t, doc, "services").(map[string]any)
	for _, name := range []string{"postgres", "redis", "assistant", "loadbalancer"} {
		if services[name] == nil {
			t.Fatalf("compose.yaml has no %s service", name)
		}
	}
	if n, _ := get(t, services, "assistant", "deploy", "replicas").(int); n < 2 {
		t.Errorf("assistant replicas = %d, want several instances", n)
	}
	env, _ := get(t, services, "assistant", "environment").(map[string]any)
	for name := range env {
		if !settingExists(name) {
			t.Errorf("compose sets %s, which is not a setting", name)
		}
	}
	db, err := url.Parse(composeDefaults(str(t, env, "ASSISTANT_DATABASE_URL")))
	if err != nil || db.Scheme != "postgres" || db.Hostname() != "postgres" {
		t.Fatalf("ASSISTANT_DATABASE_URL %v (%v): want postgres://...@postgres", db, err)
	}
	pgEnv := get(t, services, "postgres", "environment")
	if db.User.Username() != str(t, pgEnv, "POSTGRES_USER") || strings.TrimPrefix(db.Path, "/") != str(t, pgEnv, "POSTGRES_DB") {
		t.Errorf("the database URL's user or database differs from the postgres service's")
	}
	if pw, _ := db.User.Password(); pw != composeDefaults(str(t, pgEnv, "POSTGRES_PASSWORD")) {
		t.Errorf("the database URL's password differs from the postgres service's")
	}
	rd, err := url.Parse(composeDefaults(str(t, env, "ASSISTANT_REDIS_URL")))
	if err != nil || rd.Scheme != "redis" || rd.Hostname() != "redis" {
		t.Errorf("ASSISTANT_REDIS_URL %v: want redis://redis...", rd)
	}
	for _, dep := range []string{"postgres", "redis"} {
		if get(t, services, "assistant", "depends_on", dep) == nil {
			t.Errorf("assistant does not wait for %s", dep)
		}
	}
	port := servicePort(t, str(t, env, "ASSISTANT_ADDR"))

	// The load balancer proxies to the assistant service on its port.
	mounts, _ := get(t, services, "loadbalancer", "volumes").([]any)
	if len(mounts) == 0 || !strings.HasPrefix(mounts[0].(string), "./nginx.conf:") {
		t.Fatalf("the load balancer does not mount nginx.conf")
	}
	conf, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "assistant:"+port) {
		t.Errorf("nginx.conf does not proxy to assistant:%s", port)
	}
	if !strings.Contains(string(conf), "proxy_buffering off") {
		t.Errorf("nginx.conf buffers responses: chat streams would stall")
	}
	// Secure cookies: users come in over https, and the instances know it.
	if u, err := url.Parse(composeDefaults(str(t, env, "ASSISTANT_PUBLIC_URL"))); err != nil || u.Scheme != "https" {
		t.Errorf("ASSISTANT_PUBLIC_URL %q: want an https URL, so the session cookie is Secure", str(t, env, "ASSISTANT_PUBLIC_URL"))
	}
	for _, want := range []string{"listen 8443 ssl", "ssl_certificate ", "proxy_set_header X-Forwarded-Proto $scheme"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	if !slices.Contains(mounts, any("./tls:/etc/nginx/tls:ro")) {
		t.Errorf("the load balancer does not mount the TLS pair")
	}
	if trusted := str(t, env, "ASSISTANT_TRUSTED_PROXIES"); trusted == "" {
		t.Errorf("nginx is not a trusted proxy: its X-Forwarded-Proto would be ignored")
	}
}

func TestKubernetes(t *testing.T) {
	byKind := map[string]map[string]any{}
	kust := readYAML(t, "k8s/kustomization.yaml")[0]
	resources, _ := get(t, kust, "resources").([]any)
	files := []string{"k8s/secret.example.yaml"}
	for _, r := range resources {
		files = append(files, filepath.Join("k8s", r.(string)))
	}
	for _, f := range files {
		for _, doc := range readYAML(t, f) {
			kind := str(t, doc, "kind")
			if str(t, doc, "apiVersion") == "" || kind == "" || str(t, doc, "metadata", "name") == "" {
				t.Fatalf("%s: a document without apiVersion, kind or metadata.name", f)
			}
			byKind[kind] = doc
		}
	}
	dep, svc, ing, secret := byKind["Deployment"], byKind["Service"], byKind["Ingress"], byKind["Secret"]
	if dep == nil || svc == nil || ing == nil || secret == nil {
		t.Fatalf("want a Deployment, a Service, an Ingress and a Secret; have %v", slices.Collect(func(yield func(string) bool) {
			for k := range byKind {
				if !yield(k) {
					return
				}
			}
		}))
	}
	if n, _ := get(t, dep, "spec", "replicas").(int); n < 2 {
		t.Errorf("replicas = %d, want several instances", n)
	}
	labels, _ := get(t, dep, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range get(t, dep, "spec", "selector", "matchLabels").(map[string]any) {
		if labels[k] != v {
			t.Errorf("the Deployment's selector %s=%v does not match its pods", k, v)
		}
	}
	for k, v := range get(t, svc, "spec", "selector").(map[string]any) {
		if labels[k] != v {
			t.Errorf("the Service's selector %s=%v matches no pod", k, v)
		}
	}
	container := get(t, dep, "spec", "template", "spec", "containers", 0)
	env := map[string]any{}
	for _, e := range get(t, container, "env").([]any) {
		name := str(t, e, "name")
		if !settingExists(name) {
			t.Errorf("the Deployment sets %s, which is not a setting", name)
		}
		env[name] = e
		if ref := get(t, e, "valueFrom"); ref != nil {
			if str(t, ref, "secretKeyRef", "name") != str(t, secret, "metadata", "name") {
				t.Errorf("%s reads another Secret than the example's", name)
			}
			value := str(t, secret, "stringData", str(t, ref, "secretKeyRef", "key"))
			if value == "" {
				t.Errorf("%s: the example Secret has no key %q", name, str(t, ref, "secretKeyRef", "key"))
			}
			u, err := url.Parse(value)
			want := map[string]string{"ASSISTANT_DATABASE_URL": "postgres", "ASSISTANT_REDIS_URL": "redis"}[name]
			if err != nil || (want != "" && u.Scheme != want) {
				t.Errorf("%s in the example Secret: %q, want a %s:// URL", name, value, want)
			}
		}
	}
	for _, name := range []string{"ASSISTANT_DATABASE_URL", "ASSISTANT_REDIS_URL", "ASSISTANT_ADDR"} {
		if env[name] == nil {
			t.Errorf("the Deployment does not set %s", name)
		}
	}
	port := servicePort(t, str(t, env["ASSISTANT_ADDR"], "value"))
	if p, _ := get(t, container, "ports", 0, "containerPort").(int); strconv.Itoa(p) != port {
		t.Errorf("containerPort %d, the service listens on %s", p, port)
	}
	portName := str(t, container, "ports", 0, "name")
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if got := str(t, container, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path %q, want %s", probe, got, path)
		}
		if got := str(t, container, probe, "httpGet", "port"); got != portName {
			t.Errorf("%s port %q, want %q", probe, got, portName)
		}
	}
	if got := str(t, svc, "spec", "ports", 0, "targetPort"); got != portName {
		t.Errorf("the Service targets port %q, the container's is %q", got, portName)
	}
	// Secure cookies: the Ingress terminates TLS for the host users reach,
	// and that https URL is the service's public URL.
	public, err := url.Parse(str(t, env["ASSISTANT_PUBLIC_URL"], "value"))
	if err != nil || public.Scheme != "https" {
		t.Errorf("ASSISTANT_PUBLIC_URL %v: want an https URL, so the session cookie is Secure", public)
	} else {
		host := str(t, ing, "spec", "rules", 0, "host")
		if public.Host != host || str(t, ing, "spec", "tls", 0, "hosts", 0) != host || str(t, ing, "spec", "tls", 0, "secretName") == "" {
			t.Errorf("the Ingress does not terminate TLS for %s (public URL %s)", host, public)
		}
	}
	backend := get(t, ing, "spec", "rules", 0, "http", "paths", 0, "backend", "service")
	if str(t, backend, "name") != str(t, svc, "metadata", "name") || str(t, backend, "port", "name") != str(t, svc, "spec", "ports", 0, "name") {
		t.Errorf("the Ingress does not route to the Service's named port")
	}
}
