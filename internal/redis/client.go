package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/sony/gobreaker/v2"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one Redis call: a limiter decision takes at
	// most about this long even when Redis hangs.
	DefaultTimeout = 25 * time.Millisecond
	// DefaultBreakerOpen is how long no call is attempted after Redis
	// failed tripAfter times in a row.
	DefaultBreakerOpen = time.Second
	// DefaultPrefix starts every key and channel name.
	DefaultPrefix = "assistant:"

	// tripAfter consecutive failures open the breaker.
	tripAfter = 3
	// errorLogEvery bounds how often a failed call is logged while the
	// breaker is closed.
	errorLogEvery = 10 * time.Second
)

// Options configure a Client.
type Options struct {
	// URL is the Redis server: redis://[user:password@]host:port[/db],
	// rediss:// for TLS, or unix:///path. go-redis's query parameters
	// (pool_size=...) are honoured, except that the timeouts are
	// Timeout's.
	URL string
	// Timeout bounds every call (DefaultTimeout when 0).
	Timeout time.Duration
	// BreakerOpen is how long calls are skipped after consecutive
	// failures before one probes Redis again (DefaultBreakerOpen when 0).
	BreakerOpen time.Duration
	// Prefix starts every key and channel name (DefaultPrefix when
	// empty), so that several deployments, or tests, can share a server.
	Prefix string
	// Logger receives the outage and recovery lines (required).
	Logger *slog.Logger
	// Metrics, optional, receives the adapter's collectors (Metric names
	// are listed in docs/operations.md).
	Metrics prometheus.Registerer
	// Now is the clock of log rate limiting (time.Now when nil). Limits
	// use the Redis server's clock, never this one.
	Now func() time.Time
}

// Client is a connection pool to one Redis server with the timeout,
// breaker, logging and metrics every adapter of this package shares.
// It connects lazily: New succeeds while Redis is down.
type Client struct {
	rdb      *goredis.Client
	timeout  time.Duration
	prefix   string
	instance string // random, to make sorted-set members unique
	seq      atomic.Uint64
	breaker  *gobreaker.CircuitBreaker[any]
	logger   *slog.Logger
	now      func() time.Time
	metrics  metrics

	logMu      sync.Mutex
	lastLog    time.Time
	suppressed int

	// epoch is the epoch of Redis's state (window.go) under which this
	// instance last carried its ledgers.
	epochMu sync.Mutex
	epoch   string

	// The current run of consecutive failed calls: when it began (zero
	// after a success) and whether it holds a failure other than a
	// timeout (see failingLongEnough).
	runMu       sync.Mutex
	runStart    time.Time
	runDefinite bool
}

type metrics struct {
	fallbacks *prometheus.CounterVec
	errors    *prometheus.CounterVec
	up        prometheus.Gauge
}

// New returns a client of the Redis server at opts.URL. It does not
// connect; Ping does.
func New(opts Options) (*Client, error) {
	ro, err := goredis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("ASSISTANT_REDIS_URL: %w", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.BreakerOpen <= 0 {
		opts.BreakerOpen = DefaultBreakerOpen
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Every phase of a call is bounded by the timeout, and nothing is
	// retried: a slow answer is worth less than the fallback's.
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.PoolTimeout = opts.Timeout, opts.Timeout, opts.Timeout, opts.Timeout
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = -1
	ro.DialerRetries = 1
	// A couple of connections stay open, so that a decision after a quiet
	// spell does not pay for a dial within its timeout.
	ro.MinIdleConns = 2
	// No extra round trips when a connection opens.
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if ro.Protocol == 0 {
		ro.Protocol = 2 // RESP3 would add a HELLO per connection
	}

	var id [8]byte
	rand.Read(id[:])
	c := &Client{
		rdb: goredis.NewClient(ro), timeout: opts.Timeout, prefix: opts.Prefix,
		instance: hex.EncodeToString(id[:]), logger: opts.Logger, now: opts.Now,
		metrics: metrics{
			fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "assistant_redis_fallback_decisions_total",
				Help: "Decisions made by a limiter's per-instance fallback because Redis failed or its breaker was open, by limiter.",
			}, []string{"limiter"}),
			errors: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "assistant_redis_errors_total",
				Help: "Redis calls that failed or timed out (calls skipped while the breaker is open are not counted), by operation.",
			}, []string{"op"}),
			up: prometheus.NewGauge(prometheus.GaugeOpts{
				Name: "assistant_redis_up",
				Help: "1 while Redis is in use (breaker closed), 0 while limits fall back to per-instance counting.",
			}),
		},
	}
	c.metrics.up.Set(1)
	if opts.Metrics != nil {
		if err := errors.Join(opts.Metrics.Register(c.metrics.fallbacks), opts.Metrics.Register(c.metrics.errors),
			opts.Metrics.Register(c.metrics.up)); err != nil {
			c.rdb.Close()
			return nil, fmt.Errorf("registering the Redis metrics: %w", err)
		}
	}
	c.breaker = gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:        "redis",
		MaxRequests: 1, // one probe at a time while half open
		Timeout:     opts.BreakerOpen,
		ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= tripAfter && c.failingLongEnough() },
		IsExcluded:  func(err error) bool { return errors.Is(err, errCallerGone) || errors.Is(err, errStarved) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			switch {
			case to == gobreaker.StateOpen && from == gobreaker.StateClosed:
				c.metrics.up.Set(0)
				c.logger.Warn("Redis is unavailable: limits fall back to per-instance counting until it answers again",
					"retry_every", opts.BreakerOpen.String())
			case to == gobreaker.StateClosed:
				c.metrics.up.Set(1)
				c.logger.Info("Redis answers again: shared limits resume")
			}
		},
	})
	return c, nil
}

// Close closes the connections.
func (c *Client) Close() error { return c.rdb.Close() }

// Prepare makes the first limiter decisions as fast as the later ones: it
// loads the Lua scripts into Redis (so that calls run them by hash, one
// round trip, instead of finding them missing and sending their source)
// and opens a connection. serve calls it once at start, with a deadline
// of its own; if it fails, the first calls do the same work themselves.
func (c *Client) Prepare(ctx context.Context) error {
	for _, s := range []*goredis.Script{windowScript, tieredScript, throttleBeginScript, throttleEndScript} {
		if err := s.Load(ctx, c.rdb).Err(); err != nil {
			return err
		}
	}
	// Learn the epoch of Redis's state (window.go), creating it if there is
	// none, so the first decision needs no second round trip for it.
	epoch := c.member()
	if err := c.rdb.SetArgs(ctx, c.prefix+"epoch", epoch, goredis.SetArgs{Mode: "NX", TTL: epochTTL}).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		return err
	}
	current, err := c.rdb.Get(ctx, c.prefix+"epoch").Result()
	if err != nil {
		return err
	}
	c.setEpoch(current)
	return nil
}

// Ping checks that Redis answers, through the breaker: while the breaker
// is open it fails at once. /readyz reports it; nothing depends on it.
func (c *Client) Ping(ctx context.Context) error {
	_, err := call(c, ctx, "ping", func(ctx context.Context) (string, error) {
		return c.rdb.Ping(ctx).Result()
	})
	return err
}

// key returns the full name of a key of kind for id, with id as the hash
// tag so that all keys one script touches share a cluster slot.
func (c *Client) key(kind, id string) string { return c.prefix + kind + ":{" + id + "}" }

// member returns a string unique to one call, for sorted-set members.
func (c *Client) member() string {
	return fmt.Sprintf("%s-%d", c.instance, c.seq.Add(1))
}

// slowTrip is how long calls must have been timing out, with no other
// kind of failure, before the breaker opens: 40 timeouts (a second with
// the default 25 ms), at least 250 ms and at most a second.
func slowTrip(timeout time.Duration) time.Duration {
	return min(time.Second, max(250*time.Millisecond, 40*timeout))
}

// failingLongEnough lets the breaker open on tripAfter consecutive
// failures when one of them was not a timeout (Redis refused the
// connection: it is down), or when they have been timing out for
// slowTrip: a hung Redis. A short spell of slow answers (a machine whose
// CPUs are saturated) does not open it, so the shared limits stay exact
// through it; the calls that time out meanwhile are refused, never
// admitted past the limit (window.go).
func (c *Client) failingLongEnough() bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.runDefinite || (!c.runStart.IsZero() && time.Since(c.runStart) >= slowTrip(c.timeout))
}

// noteOutcome keeps the current run of failures up to date.
func (c *Client) noteOutcome(err error) {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	switch {
	case err == nil:
		c.runStart, c.runDefinite = time.Time{}, false
	case errors.Is(err, errCallerGone), errors.Is(err, errStarved):
	default:
		if c.runStart.IsZero() {
			c.runStart = time.Now()
		}
		if !timedOut(err) {
			c.runDefinite = true
		}
	}
}

// errCallerGone marks a call abandoned because the caller's context ended:
// not a sign that Redis is unwell, so the breaker ignores it.
var errCallerGone = errors.New("the caller gave up")

// errStarved marks a call that timed out only after more than twice its
// timeout: this process, not Redis, was too slow to read the answer (its
// CPUs saturated). Such a call is retried like any timed-out one, but does
// not count towards opening the breaker, so a busy machine with a healthy
// Redis keeps the exact shared limits.
var errStarved = errors.New("this process was starved of CPU")

// call runs fn with the timeout, through the breaker. Failures are
// counted and logged (at most once per errorLogEvery, plus the breaker's
// state changes); the caller then decides with its fallback.
func call[T any](c *Client, ctx context.Context, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	res, err := c.breaker.Execute(func() (any, error) {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		v, err := fn(cctx)
		switch {
		case err != nil && ctx.Err() != nil:
			err = fmt.Errorf("%w: %w", errCallerGone, err)
		case err != nil && time.Since(start) > 2*c.timeout:
			err = fmt.Errorf("%w: %w", errStarved, err)
		}
		c.noteOutcome(err)
		return v, err
	})
	if err != nil {
		var zero T
		if !errors.Is(err, gobreaker.ErrOpenState) && !errors.Is(err, gobreaker.ErrTooManyRequests) && !errors.Is(err, errCallerGone) {
			c.metrics.errors.WithLabelValues(op).Inc()
			c.logFailure(op, err)
		}
		return zero, fmt.Errorf("redis %s: %w", op, err)
	}
	return res.(T), nil
}

// fellBack counts a decision made by limiter's fallback.
func (c *Client) fellBack(limiter string) { c.metrics.fallbacks.WithLabelValues(limiter).Inc() }

// logFailure logs a failed call, at most once per errorLogEvery.
func (c *Client) logFailure(op string, err error) {
	now := c.now()
	c.logMu.Lock()
	if !c.lastLog.IsZero() && now.Sub(c.lastLog) < errorLogEvery {
		c.suppressed++
		c.logMu.Unlock()
		return
	}
	suppressed := c.suppressed
	c.lastLog, c.suppressed = now, 0
	c.logMu.Unlock()
	c.logger.Warn("a Redis call failed; deciding with the per-instance fallback", "op", op, "err", err,
		"failures_not_logged", suppressed)
}

// RouteDriverLogs sends go-redis's own log lines (one per failed dial,
// among others) to logger at debug level instead of stderr: the outage
// they describe is already logged once by the Client. go-redis keeps this
// logger process-wide, so only run() calls it, once, before any Client.
func RouteDriverLogs(logger *slog.Logger) {
	goredis.SetLogger(driverLogger{logger})
}

type driverLogger struct{ logger *slog.Logger }

func (l driverLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
