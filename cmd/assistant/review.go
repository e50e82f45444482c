package main

import (
	"context"
	"log/slog"
	"time"
)

// reviewSweepEvery is how often serve deletes the kept turns whose
// retention period ended (reads never show them past it anyway).
const reviewSweepEvery = 10 * time.Minute

// reviewPurger deletes the kept turns that expired at now
// (assistant.ReviewStore.PurgeReviews).
type reviewPurger interface {
	PurgeReviews(ctx context.Context, now time.Time) (int, error)
}

// sweepReviews deletes expired kept turns at once and then every `every`,
// until ctx ends.
func sweepReviews(ctx context.Context, store reviewPurger, now func() time.Time, every time.Duration, logger *slog.Logger) {
	sweep(ctx, every, func(ctx context.Context) (int, error) { return store.PurgeReviews(ctx, now()) },
		"deleting expired review turns failed", "deleted expired review turns", "turns", logger)
}

// sweep runs purge at once and then every `every` until ctx ends, logging
// a failure as failed and what it removed as done, counted in unit.
func sweep(ctx context.Context, every time.Duration, purge func(context.Context) (int, error), failed, done, unit string, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := purge(ctx); err != nil && ctx.Err() == nil {
			logger.Warn(failed, "err", err)
		} else if n > 0 {
			logger.Info(done, unit, n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
