package llm

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/constraintlab/assistant/internal/telemetry"
)

// RemoteConfig configures a provider that calls a model over HTTP
// (internal/llm/openai, internal/llm/anthropic).
type RemoteConfig struct {
	// BaseURL is ASSISTANT_LLM_BASE_URL (default: the provider's public
	// API).
	BaseURL string
	// APIKey is ASSISTANT_LLM_API_KEY.
	APIKey string
	// Model is ASSISTANT_LLM_MODEL; required.
	Model string
	// HTTPClient sends the requests (default: a new client on
	// http.DefaultTransport); Settle gives a copy of it a transport that
	// propagates the trace context. Its Timeout should be zero: Timeout
	// below bounds each attempt, streams included.
	HTTPClient *http.Client
	// Timeout bounds each attempt, including reading a streamed answer
	// (default DefaultTimeout).
	Timeout time.Duration
	// MaxRetries is how many times the SDK retries a failed attempt
	// (connection error, 408, 409, 429, 5xx): 0 means DefaultMaxRetries, a
	// negative value disables retries.
	MaxRetries int
	// Logger receives breaker state changes (default: discarded).
	Logger *slog.Logger
	// Metrics, optional, reports the provider's breaker state.
	Metrics *Metrics
}

// Defaults of RemoteConfig.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 2
	// MaxRetryWait bounds a server-directed wait (Retry-After): a longer
	// one ends the call at once with ErrUnavailable instead.
	MaxRetryWait = 20 * time.Second
)

// Settle validates c for the named provider and returns it with every
// default filled in: the base URL checked (defaultBaseURL when empty), the
// timeout, the retry count (0 when retries are disabled), an HTTP client
// and a logger. Errors wrap ErrMisconfigured and name the setting at fault.
func (c RemoteConfig) Settle(provider, defaultBaseURL string) (RemoteConfig, error) {
	if c.Model == "" {
		return c, fmt.Errorf("%w: %s: %s is required", ErrMisconfigured, provider, SettingModel)
	}
	baseURL, err := BaseURL(c.BaseURL, defaultBaseURL)
	if err != nil {
		return c, fmt.Errorf("%s: %w", provider, err)
	}
	c.BaseURL = baseURL
	switch {
	case c.Timeout < 0:
		return c, fmt.Errorf("%w: %s: negative timeout %s", ErrMisconfigured, provider, c.Timeout)
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	// Each request carries the trace context of the call that makes it
	// (W3C traceparent and baggage), so the upstream's own traces join
	// the turn's; without a traced call it is sent as it is.
	client := http.Client{}
	if c.HTTPClient != nil {
		client = *c.HTTPClient
	}
	client.Transport = telemetry.Propagating(client.Transport)
	c.HTTPClient = &client
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
