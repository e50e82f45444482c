package main

import (
	"context"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/postgres"
	"github.com/constraintlab/assistant/internal/retrieval"
	"github.com/constraintlab/assistant/internal/sqlite"
)

// store is the database as every subcommand uses it: the domain's
// interfaces only, so that choosing another adapter is a matter for
// openStore alone.
type store interface {
	assistant.KnowledgeStore
	assistant.KnowledgeImporter
	assistant.CitationStore
	assistant.AccessStore
	assistant.ReviewStore
	assistant.Pinger
	assistant.Exporter
	assistant.Loader
	assistant.WebhookStore
	// WorkspaceExists reports whether the workspace exists.
	WorkspaceExists(ctx context.Context, id string) (bool, error)
	Close() error
}

// backend is an opened store with what serve needs beside it: the
// retriever that ranks its entities and the admin sessions kept in the
// same database.
type backend struct {
	store
	// retriever is the shared in-memory index over the store's entities
	// (internal/retrieval), which every store ranks through alike.
	retriever *retrieval.Index
	// reader answers knowledge reads (cards, stats) from the retriever's
	// snapshot, in memory, following the aliases of merged entities;
	// writes go to the store.
	reader assistant.KnowledgeStore
	// sessions returns the admin sessions' store and a function that
	// stops its background cleanup.
	sessions func() (scs.Store, func())
	// pool is the collector of the database pool's figures.
	pool prometheus.Collector
}

// openStore opens the store that ASSISTANT_DATABASE_URL selects by its
// scheme, applying pending migrations: SQLite by default (empty, a path,
// sqlite:// or file:), PostgreSQL for postgres:// or postgresql://. Both
// rank through the same in-memory index and keep the admin sessions in
// their own database.
func openStore(ctx context.Context, cfg *config.Config, now func() time.Time) (*backend, error) {
	aliases, err := knowledge.EmbeddedAliases()
	if err != nil {
		return nil, err
	}
	if cfg.UsesPostgres() {
		db, err := postgres.Open(ctx, cfg.DatabaseURL, now)
		if err != nil {
			return nil, err
		}
		ix := retrieval.NewIndex(db)
		return &backend{store: db, retriever: ix, reader: knowledge.WithAliases(ix.Reader(db), aliases), pool: pgxPoolCollector{db.Pool()}, sessions: func() (scs.Store, func()) {
			// pgxstore's own cleanup goroutine races with its StopCleanup
			// (it creates the stop channel inside the goroutine), so it is
			// off and expired sessions are deleted by a loop of ours.
			s := pgxstore.NewWithCleanupInterval(db.Pool(), 0)
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				ticker := time.NewTicker(30 * time.Minute)
				defer ticker.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-ticker.C:
						db.DeleteExpiredSessions(ctx)
					}
				}
			}()
			return s, func() { stop(); <-done }
		}}, nil
	}
	path, err := cfg.SQLitePath()
	if err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, path, now)
	if err != nil {
		return nil, err
	}
	ix := retrieval.NewIndex(db)
	return &backend{store: db, retriever: ix, reader: knowledge.WithAliases(ix.Reader(db), aliases), pool: collectors.NewDBStatsCollector(db.SQL(), "sqlite"), sessions: func() (scs.Store, func()) {
		s := sqlite3store.NewWithCleanupInterval(db.SQL(), 30*time.Minute)
		return s, s.StopCleanup
	}}, nil
}

// pgxPoolCollector reports a pgx pool's figures under the names
// collectors.NewDBStatsCollector gives database/sql's (go_sql_*, with
// db_name="postgres"), so one dashboard reads either store.
type pgxPoolCollector struct{ pool *pgxpool.Pool }

func pgxDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("go_sql_"+name, help, nil, prometheus.Labels{"db_name": "postgres"})
}

var (
	pgxMaxOpen   = pgxDesc("max_open_connections", "Maximum number of open connections to the database.")
	pgxOpen      = pgxDesc("open_connections", "The number of established connections both in use and idle.")
	pgxInUse     = pgxDesc("in_use_connections", "The number of connections currently in use.")
	pgxIdle      = pgxDesc("idle_connections", "The number of idle connections.")
	pgxWaitCount = pgxDesc("wait_count_total", "The total number of connections waited for.")
	pgxWaitTime  = pgxDesc("wait_duration_seconds_total", "The total time blocked waiting for a new connection.")
)

func (c pgxPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pgxMaxOpen, pgxOpen, pgxInUse, pgxIdle, pgxWaitCount, pgxWaitTime} {
		ch <- d
	}
}

func (c pgxPoolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(pgxMaxOpen, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(pgxOpen, prometheus.GaugeValue, float64(st.TotalConns()))
	ch <- prometheus.MustNewConstMetric(pgxInUse, prometheus.GaugeValue, float64(st.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(pgxIdle, prometheus.GaugeValue, float64(st.IdleConns()))
	ch <- prometheus.MustNewConstMetric(pgxWaitCount, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(pgxWaitTime, prometheus.CounterValue, st.AcquireDuration().Seconds())
}
