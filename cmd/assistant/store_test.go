package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/config"
)

// openStore picks the adapter by the URL's scheme: SQLite for a path or
// sqlite:// URL, and a clear refusal for postgres:// until it is built.
func TestOpenStoreByScheme(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, u := range []string{"", filepath.Join(dir, "a.db"), "sqlite://" + filepath.Join(dir, "b.db")} {
		b, err := openStore(ctx, &config.Config{DataDir: dir, DatabaseURL: u}, time.Now)
		if err != nil {
			t.Fatalf("%q: %v", u, err)
		}
		if err := b.Ping(ctx); err != nil {
			t.Errorf("%q: ping: %v", u, err)
		}
		sessions, stop := b.sessions()
		if sessions == nil {
			t.Errorf("%q: no session store", u)
		}
		stop()
		b.Close()
	}
	for _, u := range []string{"postgres://u:p@db/x", "postgresql://db/x"} {
		if _, err := openStore(ctx, &config.Config{DataDir: dir, DatabaseURL: u}, time.Now); !errors.Is(err, config.ErrPostgresNotBuilt) {
			t.Errorf("%q: err = %v, want ErrPostgresNotBuilt", u, err)
		}
	}
}
