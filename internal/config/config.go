// Package config builds the service's typed configuration once, at start:
// from ASSISTANT_* environment variables, overridden by command-line flags
// of the same name (D24), validated, and printable with secrets masked.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is the validated configuration of the service.
type Config struct {
	Addr            string
	DataDir         string
	DatabaseURL     string // "" means the SQLite file in DataDir
	RedisURL        string
	RedisTimeout    time.Duration
	LLMProvider     string
	LLMBaseURL      string
	LLMAPIKey       string
	LLMModel        string
	TrustedProxies  []netip.Prefix
	ChatRateLimit   int
	ChatRateWindow  time.Duration
	PublicSoftLimit int
	PublicHardLimit int
	LogLevel        slog.Level
	CORSOrigins     []string
	ProfileAddr     string // "" means no profiling listener
	// MetricsAddr, when set, is a listener of its own for /metrics, which
	// the main listener then does not serve; MetricsToken, when set, is
	// the bearer token /metrics on the main listener requires.
	MetricsAddr  string
	MetricsToken string
	// PublicURL is where users reach the service ("" when unset); an
	// https one makes the admin session cookie always Secure.
	PublicURL string
	// TLSCertFile and TLSKeyFile, both or neither, make serve terminate
	// TLS itself.
	TLSCertFile, TLSKeyFile string
	// WebhookKey seals webhook signing secrets at rest ("" on SQLite: a
	// key file in DataDir; on PostgreSQL webhooks then stay off).
	WebhookKey string
	// WebhookAllowPrivate admits webhook URLs on loopback, private and
	// link-local addresses, and http (tests, private networks).
	WebhookAllowPrivate bool
	// WebhookRetryBase is the delay before a failed delivery's first
	// retry; later ones double it (up to an hour).
	WebhookRetryBase time.Duration
	// AsyncQueue bounds a workspace's asynchronous turns waiting or
	// running; AsyncWorkers is how many this instance runs at once.
	AsyncQueue, AsyncWorkers int
}

// Setting describes one configuration setting: its environment variable,
// its flag, its default and what it does. Settings lists them all; the list
// in docs/operations.md is checked against it by a test.
type Setting struct {
	Env     string
	Flag    string
	Default string
	Help    string
	Secret  bool
	// NotYet names the issue that builds the feature when the setting
	// cannot be used yet; such a setting is refused at start when set.
	NotYet string
	apply  func(c *Config, v string) error
}

// Settings lists every setting, in the order docs/operations.md gives them.
var Settings = []Setting{
	{Env: "ASSISTANT_ADDR", Flag: "addr", Default: ":8080", Help: "address to listen on (host:port; :0 picks a free port)",
		apply: func(c *Config, v string) error { c.Addr = v; return nil }},
	{Env: "ASSISTANT_DATA_DIR", Flag: "data-dir", Default: "./data", Help: "directory of the SQLite database and other local state",
		apply: func(c *Config, v string) error { c.DataDir = v; return nil }},
	{Env: "ASSISTANT_DATABASE_URL", Flag: "database-url", Default: "", Secret: true,
		Help:  "database to use: empty for the SQLite file in the data dir, a file path or sqlite:// URL for another SQLite file; a postgres:// URL selects PostgreSQL",
		apply: func(c *Config, v string) error { c.DatabaseURL = v; return nil }},
	{Env: "ASSISTANT_REDIS_URL", Flag: "redis-url", Default: "", Secret: true,
		Help:  "Redis (redis://, rediss:// or unix://) shared by all instances for rate limits, the login throttle and key revocations; empty keeps them in process",
		apply: func(c *Config, v string) error { c.RedisURL = v; return nil }},
	{Env: "ASSISTANT_REDIS_TIMEOUT", Flag: "redis-timeout", Default: "25ms", Help: "time limit of each Redis call (1ms to 1s); past it a limit is decided by this instance alone",
		apply: func(c *Config, v string) (err error) { c.RedisTimeout, err = parseRedisTimeout(v); return err }},
	{Env: "ASSISTANT_LLM_PROVIDER", Flag: "llm-provider", Default: "builtin", Help: "model provider of the chat: builtin (offline), openai or anthropic",
		apply: func(c *Config, v string) error { c.LLMProvider = v; return nil }},
	{Env: "ASSISTANT_LLM_BASE_URL", Flag: "llm-base-url", Default: "", Help: "base URL of the model provider's API (openai: any OpenAI-compatible server)",
		apply: func(c *Config, v string) error { c.LLMBaseURL = v; return nil }},
	{Env: "ASSISTANT_LLM_API_KEY", Flag: "llm-api-key", Default: "", Secret: true, Help: "API key of the model provider (never logged)",
		apply: func(c *Config, v string) error { c.LLMAPIKey = v; return nil }},
	{Env: "ASSISTANT_LLM_MODEL", Flag: "llm-model", Default: "", Help: "model name at the provider (required for openai and anthropic)",
		apply: func(c *Config, v string) error { c.LLMModel = v; return nil }},
	{Env: "ASSISTANT_TRUSTED_PROXIES", Flag: "trusted-proxies", Default: "", Help: "comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed",
		apply: func(c *Config, v string) (err error) { c.TrustedProxies, err = parsePrefixes(v); return err }},
	{Env: "ASSISTANT_CHAT_RATE_LIMIT", Flag: "chat-rate-limit", Default: "60", Help: "chat (and verify) requests per key per rolling window (ASSISTANT_CHAT_RATE_WINDOW); 0 disables",
		apply: func(c *Config, v string) (err error) { c.ChatRateLimit, err = parseLimit(v); return err }},
	{Env: "ASSISTANT_CHAT_RATE_WINDOW", Flag: "chat-rate-window", Default: "60s", Help: "the rolling window of the per-key chat limit: whole seconds from 1s to 1h, e.g. 60s or 2s",
		apply: func(c *Config, v string) (err error) { c.ChatRateWindow, err = parseWindow(v); return err }},
	{Env: "ASSISTANT_PUBLIC_SOFT_LIMIT", Flag: "public-soft-limit", Default: "60", Help: "public requests per client IP per minute before RateLimit headers show 0 left; 0 disables",
		apply: func(c *Config, v string) (err error) { c.PublicSoftLimit, err = parseLimit(v); return err }},
	{Env: "ASSISTANT_PUBLIC_HARD_LIMIT", Flag: "public-hard-limit", Default: "600", Help: "public requests per client IP per minute before 429; 0 disables",
		apply: func(c *Config, v string) (err error) { c.PublicHardLimit, err = parseLimit(v); return err }},
	{Env: "ASSISTANT_LOG_LEVEL", Flag: "log-level", Default: "info", Help: "debug, info, warn or error",
		apply: func(c *Config, v string) error { return c.LogLevel.UnmarshalText([]byte(v)) }},
	{Env: "ASSISTANT_CORS_ORIGINS", Flag: "cors-origins", Default: "", Help: "comma-separated origins allowed to call /api/v1/ from a browser",
		apply: func(c *Config, v string) error { c.CORSOrigins = splitList(v); return nil }},
	{Env: "ASSISTANT_PROFILE_ADDR", Flag: "profile-addr", Default: "", Help: "host:port of a second listener serving Go's runtime profiles at /debug/pprof/ (no authentication: keep it on loopback); empty turns it off",
		apply: func(c *Config, v string) (err error) { c.ProfileAddr, err = parseProfileAddr(v); return err }},
	{Env: "ASSISTANT_METRICS_ADDR", Flag: "metrics-addr", Default: "", Help: "host:port of a second listener serving /metrics alone (keep it where only Prometheus reaches it); the main listener then does not serve /metrics. Empty: /metrics is on the main listener",
		apply: func(c *Config, v string) (err error) { c.MetricsAddr, err = parseProfileAddr(v); return err }},
	{Env: "ASSISTANT_METRICS_TOKEN", Flag: "metrics-token", Default: "", Secret: true, Help: "a bearer token that /metrics on the main listener requires (Authorization: Bearer ...); empty: /metrics there needs none",
		apply: func(c *Config, v string) error { c.MetricsToken = v; return nil }},
	{Env: "ASSISTANT_PUBLIC_URL", Flag: "public-url", Default: "", Help: "the URL users reach the service at (http:// or https://, no path), printed in the setup link; https makes the admin session cookie always Secure",
		apply: func(c *Config, v string) (err error) { c.PublicURL, err = parsePublicURL(v); return err }},
	{Env: "ASSISTANT_TLS_CERT_FILE", Flag: "tls-cert-file", Default: "", Help: "PEM certificate (chain) file: with ASSISTANT_TLS_KEY_FILE, serve terminates TLS itself and reloads both when they change",
		apply: func(c *Config, v string) error { c.TLSCertFile = v; return nil }},
	{Env: "ASSISTANT_TLS_KEY_FILE", Flag: "tls-key-file", Default: "", Help: "PEM private key file of ASSISTANT_TLS_CERT_FILE",
		apply: func(c *Config, v string) error { c.TLSKeyFile = v; return nil }},
	{Env: "ASSISTANT_WEBHOOK_KEY", Flag: "webhook-key", Default: "", Secret: true, Help: "at least 32 characters (e.g. openssl rand -base64 32) that encrypt webhook signing secrets at rest; unset on SQLite: a key file webhook.key in the data dir; unset on PostgreSQL: webhooks are off",
		apply: func(c *Config, v string) error {
			if v != "" && len(v) < 32 {
				return errors.New("must be at least 32 characters (e.g. openssl rand -base64 32)")
			}
			c.WebhookKey = v
			return nil
		}},
	{Env: "ASSISTANT_WEBHOOK_ALLOW_PRIVATE", Flag: "webhook-allow-private", Default: "false", Help: "true admits webhook URLs on loopback, private and link-local addresses and plain http (tests, private networks); false refuses them at creation and at connect time",
		apply: func(c *Config, v string) (err error) { c.WebhookAllowPrivate, err = parseBool(v); return err }},
	{Env: "ASSISTANT_WEBHOOK_RETRY_BASE", Flag: "webhook-retry-base", Default: "5s", Help: "delay before a failed webhook delivery is retried (10ms to 1m); each retry doubles it up to an hour, with jitter, for up to 3 days",
		apply: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 10*time.Millisecond || d > time.Minute {
				return fmt.Errorf("%q is not a duration from 10ms to 1m", v)
			}
			c.WebhookRetryBase = d
			return nil
		}},
	{Env: "ASSISTANT_ASYNC_QUEUE", Flag: "async-queue", Default: "100", Help: "asynchronous chat turns (Prefer: respond-async) a workspace may have waiting or running; past it 429",
		apply: func(c *Config, v string) (err error) { c.AsyncQueue, err = parsePositive(v); return err }},
	{Env: "ASSISTANT_ASYNC_WORKERS", Flag: "async-workers", Default: "4", Help: "asynchronous chat turns this instance runs at once",
		apply: func(c *Config, v string) (err error) { c.AsyncWorkers, err = parsePositive(v); return err }},
}

func parseBool(v string) (bool, error) {
	switch v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", v)
}

func parsePositive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, fmt.Errorf("%q is not a whole number from 1 to 1000000", v)
	}
	return n, nil
}

// parsePublicURL accepts an absolute http or https URL with a host and no
// path beyond "/", and returns it without a trailing slash.
func parsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("must be http://host[:port] or https://host[:port] (the service is mounted at the root), not %q", v)
	}
	return strings.TrimSuffix(v, "/"), nil
}

// PublicHTTPS reports whether users reach the service over https (the
// configured public URL says so).
func (c *Config) PublicHTTPS() bool { return strings.HasPrefix(c.PublicURL, "https://") }

// ServesTLS reports whether serve terminates TLS itself.
func (c *Config) ServesTLS() bool { return c.TLSCertFile != "" }

// ErrFlags marks a command line the flag set could not parse (an unknown
// flag, a malformed value): a usage error rather than a bad setting.
var ErrFlags = errors.New("bad command line")

// Flag groups for LoadFlags: the settings a subcommand that opens the
// database uses, and those of the model provider.
var (
	StoreFlags = []string{"data-dir", "database-url"}
	ModelFlags = []string{"llm-provider", "llm-base-url", "llm-api-key", "llm-model"}
)

// Load builds the configuration from getenv and the flags in args, with
// every setting offered as a flag. fs may carry the subcommand's own flags
// too; positional arguments are left in fs.Args(). It returns flag.ErrHelp
// when args ask for help (the usage is then printed on fs's output).
func Load(fs *flag.FlagSet, args []string, getenv func(string) string) (*Config, error) {
	all := make([]string, len(Settings))
	for i, s := range Settings {
		all[i] = s.Flag
	}
	return LoadFlags(fs, args, getenv, all)
}

// LoadFlags is Load with only the settings whose flag names are in flags
// offered as flags on fs (a subcommand offers the settings it uses). Every
// setting is still read from the environment and validated, so a setting
// of a feature not built yet is refused by every subcommand. It panics on
// a name that is not a setting's flag.
func LoadFlags(fs *flag.FlagSet, args []string, getenv func(string) string, flags []string) (*Config, error) {
	offered := map[string]bool{}
	for _, f := range flags {
		offered[f] = true
	}
	values := make([]string, len(Settings))
	explicit := make([]bool, len(Settings))
	for i, s := range Settings {
		values[i] = s.Default
		if v := getenv(s.Env); v != "" {
			values[i], explicit[i] = v, true
		}
		if !offered[s.Flag] {
			continue
		}
		delete(offered, s.Flag)
		fs.Func(s.Flag, fmt.Sprintf("%s (env %s, default %q)", s.Help, s.Env, s.Default), func(v string) error {
			values[i], explicit[i] = v, true
			return nil
		})
	}
	for f := range offered {
		panic(fmt.Sprintf("config: no setting has the flag --%s", f))
	}
	// Flags may come before or after positional arguments
	// (`keys revoke ID --data-dir D`); positionals are collected in order.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrFlags, err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// Leave the positionals where callers read them: fs.Args().
	fs.Parse(append([]string{"--"}, positional...))
	c := &Config{}
	var errs []error
	for i, s := range Settings {
		if err := s.apply(c, values[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", s.Env, err))
		}
		if explicit[i] && s.NotYet != "" {
			errs = append(errs, fmt.Errorf("%s is set, but its feature is not built yet (it arrives with %s); unset it", s.Env, s.NotYet))
		}
	}
	if err := c.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func (c *Config) validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("ASSISTANT_ADDR must not be empty"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("ASSISTANT_DATA_DIR must not be empty"))
	}
	if !c.UsesPostgres() {
		if _, err := c.SQLitePath(); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.LLMProvider {
	case "builtin":
		for name, v := range map[string]string{"ASSISTANT_LLM_BASE_URL": c.LLMBaseURL, "ASSISTANT_LLM_API_KEY": c.LLMAPIKey, "ASSISTANT_LLM_MODEL": c.LLMModel} {
			if v != "" {
				errs = append(errs, fmt.Errorf("%s is set but ASSISTANT_LLM_PROVIDER is builtin, which uses no remote model; set ASSISTANT_LLM_PROVIDER=openai or anthropic, or unset it", name))
			}
		}
	case "openai", "anthropic":
		if c.LLMModel == "" {
			errs = append(errs, fmt.Errorf("ASSISTANT_LLM_PROVIDER=%s needs ASSISTANT_LLM_MODEL", c.LLMProvider))
		}
		if c.LLMProvider == "anthropic" && c.LLMAPIKey == "" {
			errs = append(errs, errors.New("ASSISTANT_LLM_PROVIDER=anthropic needs ASSISTANT_LLM_API_KEY"))
		}
	default:
		errs = append(errs, fmt.Errorf("ASSISTANT_LLM_PROVIDER=%q is not one of builtin, openai, anthropic", c.LLMProvider))
	}
	if err := checkRedisURL(c.RedisURL); err != nil {
		errs = append(errs, err)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		errs = append(errs, errors.New("ASSISTANT_TLS_CERT_FILE and ASSISTANT_TLS_KEY_FILE go together: set both to serve TLS, or neither"))
	}
	if c.PublicSoftLimit > 0 && c.PublicHardLimit > 0 && c.PublicSoftLimit > c.PublicHardLimit {
		errs = append(errs, fmt.Errorf("ASSISTANT_PUBLIC_SOFT_LIMIT (%d) must not exceed ASSISTANT_PUBLIC_HARD_LIMIT (%d)", c.PublicSoftLimit, c.PublicHardLimit))
	}
	return errors.Join(errs...)
}

// UsesPostgres reports whether ASSISTANT_DATABASE_URL selects PostgreSQL
// (postgres:// or postgresql://).
func (c *Config) UsesPostgres() bool {
	return strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// SQLitePath returns the SQLite database file the configuration selects.
func (c *Config) SQLitePath() (string, error) {
	u := c.DatabaseURL
	switch {
	case u == "":
		return filepath.Join(c.DataDir, "assistant.db"), nil
	case c.UsesPostgres():
		return "", fmt.Errorf("ASSISTANT_DATABASE_URL selects PostgreSQL, not a SQLite file: %s", maskURL(u))
	case strings.HasPrefix(u, "sqlite://"):
		return strings.TrimPrefix(u, "sqlite://"), nil
	case strings.HasPrefix(u, "file:"):
		return strings.TrimPrefix(u, "file:"), nil
	case strings.Contains(u, "://"):
		return "", fmt.Errorf("ASSISTANT_DATABASE_URL has an unknown scheme: %s", maskURL(u))
	default:
		return u, nil
	}
}

// String prints the configuration, one setting a line, with secrets masked.
func (c *Config) String() string {
	var b strings.Builder
	values := map[string]string{
		"ASSISTANT_ADDR": c.Addr, "ASSISTANT_DATA_DIR": c.DataDir, "ASSISTANT_DATABASE_URL": maskURL(c.DatabaseURL),
		"ASSISTANT_REDIS_URL": maskURL(c.RedisURL), "ASSISTANT_REDIS_TIMEOUT": c.RedisTimeout.String(), "ASSISTANT_LLM_PROVIDER": c.LLMProvider,
		"ASSISTANT_LLM_BASE_URL": c.LLMBaseURL, "ASSISTANT_LLM_API_KEY": mask(c.LLMAPIKey), "ASSISTANT_LLM_MODEL": c.LLMModel,
		"ASSISTANT_TRUSTED_PROXIES": joinPrefixes(c.TrustedProxies), "ASSISTANT_CHAT_RATE_LIMIT": strconv.Itoa(c.ChatRateLimit),
		"ASSISTANT_CHAT_RATE_WINDOW":  seconds(c.ChatRateWindow),
		"ASSISTANT_PUBLIC_SOFT_LIMIT": strconv.Itoa(c.PublicSoftLimit), "ASSISTANT_PUBLIC_HARD_LIMIT": strconv.Itoa(c.PublicHardLimit),
		"ASSISTANT_LOG_LEVEL": c.LogLevel.String(), "ASSISTANT_CORS_ORIGINS": strings.Join(c.CORSOrigins, ","),
		"ASSISTANT_PROFILE_ADDR": c.ProfileAddr, "ASSISTANT_PUBLIC_URL": c.PublicURL,
		"ASSISTANT_METRICS_ADDR": c.MetricsAddr, "ASSISTANT_METRICS_TOKEN": mask(c.MetricsToken),
		"ASSISTANT_TLS_CERT_FILE": c.TLSCertFile, "ASSISTANT_TLS_KEY_FILE": c.TLSKeyFile,
		"ASSISTANT_WEBHOOK_KEY": mask(c.WebhookKey), "ASSISTANT_WEBHOOK_ALLOW_PRIVATE": strconv.FormatBool(c.WebhookAllowPrivate),
		"ASSISTANT_WEBHOOK_RETRY_BASE": c.WebhookRetryBase.String(),
		"ASSISTANT_ASYNC_QUEUE":        strconv.Itoa(c.AsyncQueue), "ASSISTANT_ASYNC_WORKERS": strconv.Itoa(c.AsyncWorkers),
	}
	for _, s := range Settings {
		fmt.Fprintf(&b, "%s=%s\n", s.Env, values[s.Env])
	}
	return b.String()
}

// LogValue keeps secrets out of structured logs.
func (c *Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr), slog.String("data_dir", c.DataDir),
		slog.String("database_url", maskURL(c.DatabaseURL)), slog.String("redis_url", maskURL(c.RedisURL)),
		slog.String("redis_timeout", c.RedisTimeout.String()), slog.String("llm_provider", c.LLMProvider),
		slog.Int("chat_rate_limit", c.ChatRateLimit), slog.String("chat_rate_window", seconds(c.ChatRateWindow)),
		slog.Int("public_soft_limit", c.PublicSoftLimit), slog.Int("public_hard_limit", c.PublicHardLimit),
		slog.String("trusted_proxies", joinPrefixes(c.TrustedProxies)), slog.String("log_level", c.LogLevel.String()),
		slog.String("profile_addr", c.ProfileAddr), slog.String("public_url", c.PublicURL),
		slog.String("metrics_addr", c.MetricsAddr), slog.String("metrics_token", mask(c.MetricsToken)),
		slog.String("tls_cert_file", c.TLSCertFile), slog.String("tls_key_file", c.TLSKeyFile),
		slog.Bool("webhook_key_set", c.WebhookKey != ""), slog.Bool("webhook_allow_private", c.WebhookAllowPrivate),
		slog.String("webhook_retry_base", c.WebhookRetryBase.String()),
		slog.Int("async_queue", c.AsyncQueue), slog.Int("async_workers", c.AsyncWorkers),
	)
}

func mask(s string) string {
	if s == "" {
		return ""
	}
	return "********"
}

func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func parseLimit(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a whole number >= 0", v)
	}
	return n, nil
}

// Bounds of ASSISTANT_CHAT_RATE_WINDOW. The window is sent in whole
// seconds (RateLimit-Policy's w, Retry-After), so it is whole seconds too.
const (
	MinChatRateWindow = time.Second
	MaxChatRateWindow = time.Hour
)

// parseWindow reads a Go duration ("60s", "2s", "1m") of whole seconds
// between MinChatRateWindow and MaxChatRateWindow.
func parseWindow(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration such as 60s or 2s", v)
	case d < MinChatRateWindow || d > MaxChatRateWindow:
		return 0, fmt.Errorf("%q is outside %s to %s", v, MinChatRateWindow, MaxChatRateWindow)
	case d%time.Second != 0:
		return 0, fmt.Errorf("%q is not a whole number of seconds", v)
	}
	return d, nil
}

// checkRedisURL accepts an empty URL (no Redis) or one go-redis can dial:
// redis:// or rediss:// with a host, or unix:// with a path.
func checkRedisURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("ASSISTANT_REDIS_URL is not a URL")
	}
	switch {
	case (u.Scheme == "redis" || u.Scheme == "rediss") && u.Host != "":
	case u.Scheme == "unix" && u.Path != "":
	default:
		return fmt.Errorf("ASSISTANT_REDIS_URL must be redis://host:port[/db], rediss://... (TLS) or unix:///path, not %s", maskURL(v))
	}
	return nil
}

// parseProfileAddr accepts "" (off) or host:port with a port. A host
// other than a loopback address or localhost is accepted (a container may
// need it) but warned about at start: the profiles need no key.
func parseProfileAddr(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		return "", fmt.Errorf("%q is not host:port (for example 127.0.0.1:6060)", v)
	}
	return v, nil
}

// ProfileOnLoopback reports whether the profiling listener is bound to
// loopback only.
func (c *Config) ProfileOnLoopback() bool {
	host, _, err := net.SplitHostPort(c.ProfileAddr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func parseRedisTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Millisecond || d > time.Second {
		return 0, fmt.Errorf("%q is not a duration from 1ms to 1s (e.g. 25ms)", v)
	}
	return d, nil
}

// seconds prints a window as ASSISTANT_CHAT_RATE_WINDOW takes it: "60s".
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(v) {
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR", s)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
