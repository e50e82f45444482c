package config_test

import (
	"errors"
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/config"
)

func load(t *testing.T, env map[string]string, args ...string) (*config.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return config.Load(fs, args, func(k string) string { return env[k] })
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.DataDir != "./data" || c.LLMProvider != "builtin" || c.PublicSoftLimit != 60 ||
		c.PublicHardLimit != 600 || c.ChatRateLimit != 60 || c.ChatRateWindow != time.Minute {
		t.Errorf("defaults: %+v", c)
	}
	if p, _ := c.SQLitePath(); p != "data/assistant.db" {
		t.Errorf("SQLite path %q", p)
	}
}

func TestFlagsOverrideEnv(t *testing.T) {
	c, err := load(t, map[string]string{"ASSISTANT_ADDR": ":1", "ASSISTANT_PUBLIC_HARD_LIMIT": "0"}, "--addr", ":2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":2" || c.PublicHardLimit != 0 {
		t.Errorf("got %+v", c)
	}
}

func TestRefusals(t *testing.T) {
	cases := map[string]map[string]string{
		"ASSISTANT_DATABASE_URL":      {"ASSISTANT_DATABASE_URL": "mysql://u:secretpw@db/x"},
		"ASSISTANT_REDIS_URL":         {"ASSISTANT_REDIS_URL": "http://u:secretpw@cache:6379"},
		"ASSISTANT_REDIS_TIMEOUT":     {"ASSISTANT_REDIS_TIMEOUT": "5s"},
		"ASSISTANT_LLM_MODEL":         {"ASSISTANT_LLM_PROVIDER": "openai"},
		"ASSISTANT_LLM_API_KEY":       {"ASSISTANT_LLM_API_KEY": "sk-secret"},
		"ASSISTANT_LLM_PROVIDER":      {"ASSISTANT_LLM_PROVIDER": "llama"},
		"ASSISTANT_PUBLIC_SOFT_LIMIT": {"ASSISTANT_PUBLIC_SOFT_LIMIT": "-1"},
		"ASSISTANT_TRUSTED_PROXIES":   {"ASSISTANT_TRUSTED_PROXIES": "not-a-cidr"},
		"ASSISTANT_LOG_LEVEL":         {"ASSISTANT_LOG_LEVEL": "loud"},
		"ASSISTANT_PUBLIC_URL":        {"ASSISTANT_PUBLIC_URL": "https://example.com/assistant"},
		"ASSISTANT_TLS_KEY_FILE":      {"ASSISTANT_TLS_CERT_FILE": "cert.pem"},
	}
	for name, env := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, env)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("error %v does not name %s", err, name)
			}
			if strings.Contains(err.Error(), "secretpw") || strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}

// TestChatRateWindow: the per-key window takes whole seconds from 1s to
// 1h, from the environment or the flag, and prints as it is written.
func TestChatRateWindow(t *testing.T) {
	c, err := load(t, map[string]string{"ASSISTANT_CHAT_RATE_WINDOW": "2s", "ASSISTANT_CHAT_RATE_LIMIT": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ChatRateWindow != 2*time.Second || c.ChatRateLimit != 2 {
		t.Errorf("got %v, %d", c.ChatRateWindow, c.ChatRateLimit)
	}
	if !strings.Contains(c.String(), "ASSISTANT_CHAT_RATE_WINDOW=2s\n") {
		t.Errorf("String:\n%s", c)
	}
	if c, err := load(t, nil, "--chat-rate-window", "1h"); err != nil || c.ChatRateWindow != time.Hour {
		t.Errorf("flag: %v, %v", c, err)
	}
	for _, bad := range []string{"0s", "500ms", "1.5s", "61m", "-1s", "60", "soon"} {
		_, err := load(t, map[string]string{"ASSISTANT_CHAT_RATE_WINDOW": bad})
		if err == nil || !strings.Contains(err.Error(), "ASSISTANT_CHAT_RATE_WINDOW") {
			t.Errorf("%q: error %v does not name the setting", bad, err)
		}
	}
}

func TestRedisSettings(t *testing.T) {
	for _, u := range []string{"redis://localhost:6379", "redis://:pw@cache:6379/2", "rediss://cache:6380", "unix:///run/redis.sock"} {
		c, err := load(t, map[string]string{"ASSISTANT_REDIS_URL": u}, "--redis-timeout", "40ms")
		if err != nil {
			t.Errorf("%s: %v", u, err)
		} else if c.RedisURL != u || c.RedisTimeout != 40*time.Millisecond {
			t.Errorf("%s: got %+v", u, c)
		}
	}
	if c, _ := load(t, nil); c.RedisURL != "" || c.RedisTimeout != 25*time.Millisecond {
		t.Errorf("defaults: %q %v", c.RedisURL, c.RedisTimeout)
	}
	for _, bad := range []string{"redis://", "localhost:6379", "unix://", "memcache://x"} {
		if _, err := load(t, map[string]string{"ASSISTANT_REDIS_URL": bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestStringMasksSecrets(t *testing.T) {
	c, err := load(t, map[string]string{"ASSISTANT_DATABASE_URL": "sqlite:///tmp/x.db"})
	if err != nil {
		t.Fatal(err)
	}
	c.LLMAPIKey = "sk-very-secret"
	c.RedisURL = "redis://:hunter2@cache:6379"
	s := c.String()
	if strings.Contains(s, "sk-very-secret") || strings.Contains(s, "hunter2") {
		t.Errorf("String leaks a secret:\n%s", s)
	}
}

// TestOperationsDocListsEverySetting keeps docs/operations.md in step with
// the code (D24).
func TestOperationsDocListsEverySetting(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(ASSISTANT_[A-Z_]+)` \\| `--([a-z-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = m[2]
	}
	for _, s := range config.Settings {
		flagName, ok := documented[s.Env]
		if !ok {
			t.Errorf("%s is not in docs/operations.md", s.Env)
		} else if flagName != s.Flag {
			t.Errorf("%s: docs say --%s, code says --%s", s.Env, flagName, s.Flag)
		}
		delete(documented, s.Env)
	}
	for env := range documented {
		t.Errorf("docs/operations.md lists %s, which the code does not have", env)
	}
}

// TestLoadFlagsOffersOnlyThoseFlags: a subcommand offers only its settings
// as flags, while every setting is still read from the environment and
// validated (an unbuilt feature's setting is refused wherever it is set).
func TestLoadFlagsOffersOnlyThoseFlags(t *testing.T) {
	loadFlags := func(env map[string]string, args ...string) (*config.Config, *flag.FlagSet, error) {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c, err := config.LoadFlags(fs, args, func(k string) string { return env[k] }, config.StoreFlags)
		return c, fs, err
	}
	c, fs, err := loadFlags(map[string]string{"ASSISTANT_ADDR": ":9"}, "--data-dir", "/tmp/d", "pos")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/tmp/d" || c.Addr != ":9" || fs.Arg(0) != "pos" {
		t.Errorf("got %+v, args %v", c, fs.Args())
	}
	for _, name := range []string{"data-dir", "database-url"} {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s is not offered", name)
		}
	}
	for _, name := range []string{"addr", "cors-origins", "llm-provider", "log-level", "redis-url"} {
		if fs.Lookup(name) != nil {
			t.Errorf("--%s is offered", name)
		}
	}
	if _, _, err := loadFlags(nil, "--cors-origins", "https://x"); !errors.Is(err, config.ErrFlags) {
		t.Errorf("--cors-origins: err = %v, want ErrFlags", err)
	}
	if _, _, err := loadFlags(map[string]string{"ASSISTANT_REDIS_URL": "localhost:6379"}); err == nil || !strings.Contains(err.Error(), "ASSISTANT_REDIS_URL") {
		t.Errorf("an invalid setting in the environment: err = %v", err)
	}
}

func TestLoadFlagsPanicsOnUnknownFlag(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	config.LoadFlags(fs, nil, func(string) string { return "" }, []string{"no-such-setting"})
}

func TestPublicURLAndTLS(t *testing.T) {
	c, err := load(t, map[string]string{"ASSISTANT_PUBLIC_URL": "https://assistant.example.com/",
		"ASSISTANT_TLS_CERT_FILE": "c.pem", "ASSISTANT_TLS_KEY_FILE": "k.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if c.PublicURL != "https://assistant.example.com" || !c.PublicHTTPS() || !c.ServesTLS() {
		t.Errorf("got %q, https %v, TLS %v", c.PublicURL, c.PublicHTTPS(), c.ServesTLS())
	}
	if c, _ := load(t, map[string]string{"ASSISTANT_PUBLIC_URL": "http://localhost:8080"}); c == nil || c.PublicHTTPS() || c.ServesTLS() {
		t.Errorf("http public URL: %+v", c)
	}
}
