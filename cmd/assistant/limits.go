package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/redis"
)

// limits builds serve's rate limiters, login throttle and key-change
// notices: in process without ASSISTANT_REDIS_URL; with it, shared by every
// instance through Redis, each shared limiter deciding with its in-process
// twin while Redis cannot answer.
type limits struct {
	redis *redis.Client // nil without Redis
	now   func() time.Time
}

// openLimits connects to Redis when one is configured. Serve starts
// whether or not Redis answers (fail open): it only logs which.
func openLimits(ctx context.Context, cfg *config.Config, logger *slog.Logger, reg prometheus.Registerer, now func() time.Time) (*limits, error) {
	l := &limits{now: now}
	if cfg.RedisURL == "" {
		return l, nil
	}
	redis.RouteDriverLogs(logger)
	c, err := redis.New(redis.Options{URL: cfg.RedisURL, Timeout: cfg.RedisTimeout, Logger: logger, Metrics: reg, Now: now})
	if err != nil {
		return nil, err
	}
	l.redis = c
	if err := c.Ping(ctx); err != nil {
		logger.Warn("Redis did not answer at start: limits are per instance until it does", "err", err)
	} else {
		logger.Info("Redis answers: rate limits, the login throttle and key revocations are shared by all instances")
		prepareCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := c.Prepare(prepareCtx); err != nil {
			logger.Warn("Redis: loading the limiters' scripts at start failed; the first calls will load them", "err", err)
		}
		cancel()
	}
	return l, nil
}

// Close closes the Redis connections.
func (l *limits) Close() {
	if l.redis != nil {
		l.redis.Close()
	}
}

// window is the exact per-key limit of D2b over the given rolling window,
// named name in Redis and the metrics.
func (l *limits) window(name string, limit int, window time.Duration) assistant.Limiter {
	if l.redis == nil {
		return ratelimit.NewSlidingWindow(limit, window, l.now)
	}
	// Its own ledger bounds it when Redis fails (internal/redis/window.go).
	return redis.NewSlidingWindow(l.redis, name, limit, window, l.now)
}

// tiered is a per-client soft/hard limit per minute.
func (l *limits) tiered(name string, soft, hard int) assistant.TieredLimiter {
	local := ratelimit.NewTiered(soft, hard, time.Minute, l.now)
	if l.redis == nil {
		return local
	}
	return redis.NewTiered(l.redis, name, soft, hard, time.Minute, local)
}

// loginThrottle is the admin login throttle.
func (l *limits) loginThrottle() assistant.LoginThrottle {
	local := access.NewLoginThrottle(l.now)
	if l.redis == nil {
		return local
	}
	return redis.NewLoginThrottle(l.redis, redis.LoginLimits{
		PairFailures: local.MaxFailures, AccountFailures: local.MaxAccountFailures, Window: local.Window, LockFor: local.LockFor,
	}, local)
}

// keyEvents returns the key-change notices between instances, or nil
// without Redis (polling alone keeps D18 then).
func (l *limits) keyEvents() assistant.KeyEvents {
	if l.redis == nil {
		return nil
	}
	return redis.NewKeyEvents(l.redis)
}

// degradable is what /readyz reports beside the database.
func (l *limits) degradable() map[string]assistant.Pinger {
	if l.redis == nil {
		return nil
	}
	return map[string]assistant.Pinger{"redis": l.redis}
}

// cliRedisTimeout bounds the one notice a command-line revocation sends:
// no request waits on it, so it may take longer than serve's calls.
const cliRedisTimeout = 2 * time.Second

// announceKeyChange tells running instances, through the Redis of
// ASSISTANT_REDIS_URL if there is one, that a command line changed keys
// (D25: a revocation by any path reaches every instance). A notice that
// cannot be sent is a warning, not an error: the instances still find the
// revocation by polling the database within a second.
func announceKeyChange(ctx context.Context, e env, ids ...string) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := config.LoadFlags(fs, nil, e.getenv, nil)
	if err != nil || cfg.RedisURL == "" {
		return // the caller's own configuration was valid: nothing to tell
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	redis.RouteDriverLogs(logger)
	c, err := redis.New(redis.Options{URL: cfg.RedisURL, Timeout: cliRedisTimeout, Logger: logger, Now: e.now})
	if err == nil {
		defer c.Close()
		err = redis.NewKeyEvents(c).PublishKeyChanges(ctx, ids...)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "warning: running instances could not be told through Redis (%v); they will refuse the key within a second by polling the database\n", err)
	}
}
