package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/config"
)

// cliRun runs the program with getenv and returns stdout, stderr and run's
// error.
func cliRun(getenv func(string) string, stdin string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestHelpListsOnlyTheSubcommandsFlags: `--help` on every subcommand lists
// its own flags and the settings it uses, and none of the others (serve's
// --cors-origins, the model provider's flags outside eval chat).
func TestHelpListsOnlyTheSubcommandsFlags(t *testing.T) {
	var all []string
	for _, s := range config.Settings {
		all = append(all, s.Flag)
	}
	store := []string{"data-dir", "database-url"}
	with := func(a []string, b ...string) []string { return append(append([]string{}, a...), b...) }
	hooks := with(store, "workspace", "webhook-key", "webhook-allow-private")
	cases := []struct {
		args []string
		want []string // flags the help lists
	}{
		{[]string{"serve"}, all},
		{[]string{"migrate"}, store},
		{[]string{"keys", "create"}, with(store, "workspace", "name", "expires-in", "json", "quiet")},
		{[]string{"keys", "list"}, with(store, "workspace", "json")},
		{[]string{"keys", "revoke"}, store},
		{[]string{"keys", "roll"}, with(store, "grace", "json")},
		{[]string{"webhooks", "create"}, with(hooks, "url", "events", "json")},
		{[]string{"webhooks", "list"}, with(hooks, "json")},
		{[]string{"webhooks", "roll-secret"}, hooks},
		{[]string{"webhooks", "enable"}, hooks},
		{[]string{"webhooks", "disable"}, hooks},
		{[]string{"webhooks", "delete"}, hooks},
		{[]string{"webhooks", "deliveries"}, with(hooks, "endpoint", "limit", "json")},
		{[]string{"webhooks", "resend"}, hooks},
		{[]string{"admin", "create-user"}, with(store, "workspace", "email")},
		{[]string{"kb", "validate"}, store},
		{[]string{"kb", "import"}, with(store, "archetype")},
		{[]string{"kb", "export"}, with(store, "format")},
		{[]string{"eval", "retrieval"}, with(store, "file", "json")},
		{[]string{"eval", "archetypes"}, with(store, "file", "json")},
		{[]string{"eval", "verify"}, with(store, "file", "json", "threshold", "failures")},
		{[]string{"eval", "chat"}, with(store, "file", "from", "answers", "ratings", "labels", "packet", "json", "failures", "llm-provider", "llm-base-url", "llm-api-key", "llm-model", "log-level")},
		{[]string{"version"}, nil},
	}
	// Every subcommand is in the table.
	covered := map[string]bool{}
	for _, c := range cases {
		covered[strings.Join(c.args, " ")] = true
	}
	groups := map[string][]command{"kb": kbSubcommands(), "eval": evalSubcommands(), "webhooks": webhooksSubcommands()}
	for _, c := range commands() {
		if sub, ok := groups[c.name]; ok {
			for _, s := range sub {
				if !covered[c.name+" "+s.name] {
					t.Errorf("%s %s is not in the table", c.name, s.name)
				}
			}
		} else if c.name != "keys" && c.name != "admin" && !covered[c.name] {
			t.Errorf("%s is not in the table", c.name)
		}
	}
	flagLine := func(help, name string) bool {
		return strings.Contains(help, "\n  -"+name+" ") || strings.Contains(help, "\n  -"+name+"\n")
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			out, help, err := cliRun(func(string) string { return "" }, "", append(c.args, "--help")...)
			if err != nil {
				t.Fatalf("--help: %v", err)
			}
			if out != "" {
				t.Errorf("--help wrote on stdout: %q", out)
			}
			if !strings.HasPrefix(help, "Usage: assistant "+strings.Join(c.args, " ")) {
				t.Errorf("the help does not start with its usage line:\n%s", help)
			}
			wanted := map[string]bool{}
			for _, f := range c.want {
				wanted[f] = true
				if !flagLine(help, f) {
					t.Errorf("the help does not list --%s:\n%s", f, help)
				}
			}
			for _, f := range all {
				if !wanted[f] && flagLine(help, f) {
					t.Errorf("the help lists --%s, which %s does not use", f, strings.Join(c.args, " "))
				}
			}
			if !wanted["addr"] {
				// A serve-only flag is refused as a usage error.
				_, _, err := cliRun(func(string) string { return "" }, "", append(c.args, "--cors-origins", "https://x")...)
				if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "cors-origins") {
					t.Errorf("--cors-origins: %v (exit %d), want a usage error", err, exitCode(err))
				}
			}
		})
	}
}

func TestVersionHelpAndArguments(t *testing.T) {
	out, help, err := cliRun(func(string) string { return "" }, "", "version", "--help")
	if err != nil || out != "" {
		t.Fatalf("version --help: %v, stdout %q", err, out)
	}
	for _, want := range []string{"Usage: assistant version", "Prints", "no flags"} {
		if !strings.Contains(help, want) {
			t.Errorf("version --help lacks %q:\n%s", want, help)
		}
	}
	if _, _, err := cliRun(func(string) string { return "" }, "", "version", "extra"); err == nil || exitCode(err) != 2 {
		t.Errorf("version extra: %v, want a usage error", err)
	}
	if _, _, err := cliRun(func(string) string { return "" }, "", "version", "--data-dir", "x"); err == nil || exitCode(err) != 2 {
		t.Errorf("version --data-dir: %v, want a usage error", err)
	}
}

// TestOtherSettingsStillComeFromTheEnvironment: a setting a subcommand
// does not offer as a flag is still read and validated, so an invalid one
// is refused there too.
func TestOtherSettingsStillComeFromTheEnvironment(t *testing.T) {
	env := map[string]string{"ASSISTANT_DATA_DIR": t.TempDir(), "ASSISTANT_REDIS_URL": "127.0.0.1:6379"}
	_, _, err := cliRun(func(k string) string { return env[k] }, "", "keys", "list", "--workspace", "w")
	if err == nil || !strings.Contains(err.Error(), "ASSISTANT_REDIS_URL") {
		t.Errorf("keys list with ASSISTANT_REDIS_URL set: %v, want a refusal naming it", err)
	}
}

func TestKeysListAndRevokeTellWhatHappened(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	getenv := func(k string) string {
		if k == "ASSISTANT_DATA_DIR" {
			return dir
		}
		return ""
	}
	cli := func(args ...string) (string, string, error) { return cliRun(getenv, "", args...) }

	// A workspace that does not exist: a usage error on stderr (main
	// prints the error there), nothing on stdout.
	for _, extra := range [][]string{nil, {"--json"}} {
		out, _, err := cli(append([]string{"keys", "list", "--workspace", "nosuch"}, extra...)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), `workspace "nosuch" does not exist`) || out != "" {
			t.Errorf("keys list of an unknown workspace %v: err %v (exit %d), stdout %q", extra, err, exitCode(err), out)
		}
	}

	// A workspace with no keys: "no keys" on stderr, exit 0; --json: [].
	if _, _, err := cliRun(getenv, "a long passphrase here\n", "admin", "create-user", "--workspace", "empty", "--email", "a@example.com"); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := cli("keys", "list", "--workspace", "empty")
	if err != nil || out != "" || !strings.Contains(errOut, "no keys in workspace empty") {
		t.Errorf("keys list of an empty workspace: %v, stdout %q, stderr %q", err, out, errOut)
	}
	if out, _, err := cli("keys", "list", "--workspace", "empty", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("keys list --json of an empty workspace: %v, %q", err, out)
	}

	// --quiet: the key alone, so that KEY=$(assistant keys create ... --quiet)
	// captures it; with --json it is a usage error.
	out, _, err = cli("keys", "create", "--workspace", "acme", "--name", "shell", "--quiet")
	if err != nil || !regexp.MustCompile(`^sk_service_[0-9A-Za-z]{50}\n$`).MatchString(out) {
		t.Errorf("keys create --quiet: %v, stdout %q", err, out)
	}
	if _, _, err = cli("keys", "create", "--workspace", "acme", "--name", "x", "--quiet", "--json"); err == nil || exitCode(err) != 2 {
		t.Errorf("--quiet with --json: %v (exit %d)", err, exitCode(err))
	}

	// Revoke, then revoke again: the second says when it was revoked and
	// exits 0 without changing that time.
	out, _, err = cli("keys", "create", "--workspace", "acme", "--name", "ci", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatal(err)
	}
	var rout, rerr bytes.Buffer
	e := env{getenv: getenv, stdout: &rout, stderr: &rerr, now: func() time.Time { return at }}
	if err := keysRevoke(context.Background(), e, []string{created.ID}); err != nil || !strings.HasPrefix(rout.String(), "Revoked key "+created.ID) {
		t.Fatalf("revoke: %v %q", err, rout.String())
	}
	rout.Reset()
	e.now = func() time.Time { return at.Add(time.Hour) }
	err = keysRevoke(context.Background(), e, []string{created.ID})
	want := fmt.Sprintf("Key %s \"ci\" of workspace acme was already revoked at 2026-03-01T12:00:00Z; nothing changed.\n", created.ID)
	if err != nil || rout.String() != want {
		t.Errorf("second revoke: %v %q, want %q", err, rout.String(), want)
	}
	if out, _, _ := cli("keys", "list", "--workspace", "acme", "--json"); !strings.Contains(out, `"revoked_at":"2026-03-01T12:00:00Z"`) {
		t.Errorf("the second revoke changed the revocation time: %s", out)
	}

	// An unknown key id: a clear error, exit 1; a malformed one: exit 2.
	_, _, err = cli("keys", "revoke", "AAAAAAAAAAAA")
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "no key with id AAAAAAAAAAAA") {
		t.Errorf("revoke of an unknown id: %v (exit %d)", err, exitCode(err))
	}
	if _, _, err = cli("keys", "revoke", "nope"); err == nil || exitCode(err) != 2 {
		t.Errorf("revoke of a malformed id: %v (exit %d)", err, exitCode(err))
	}
}
