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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := store.PurgeReviews(ctx, now()); err != nil && ctx.Err() == nil {
			logger.Warn("deleting expired review turns failed", "err", err)
		} else if n > 0 {
			logger.Info("deleted expired review turns", "turns", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
