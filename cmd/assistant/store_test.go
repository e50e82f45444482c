package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/postgres/pgtest"
)

// openStore picks the adapter by the URL's scheme: SQLite for a path or
// sqlite:// URL, PostgreSQL for postgres:// and postgresql://.
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
		if b.retriever == nil {
			t.Errorf("%q: no retriever", u)
		}
		sessions, stop := b.sessions()
		if sessions == nil {
			t.Errorf("%q: no session store", u)
		}
		stop()
		b.Close()
	}
	// A PostgreSQL server that is not there: a clear error that keeps the
	// password to itself.
	for _, u := range []string{"postgres://u:secretpw@127.0.0.1:1/x?connect_timeout=5", "postgresql://u:secretpw@127.0.0.1:1/x?connect_timeout=5"} {
		_, err := openStore(ctx, &config.Config{DataDir: dir, DatabaseURL: u}, time.Now)
		if err == nil || !strings.Contains(err.Error(), "PostgreSQL") || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%q: err = %v", u, err)
		}
	}
}

func TestOpenStorePostgres(t *testing.T) {
	ctx := context.Background()
	b, err := openStore(ctx, &config.Config{DataDir: t.TempDir(), DatabaseURL: pgtest.URL(t)}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	sessions, stop := b.sessions()
	defer stop()
	if err := sessions.Commit("token", []byte("data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("the session store cannot write its table: %v", err)
	}
	if data, found, err := sessions.Find("token"); err != nil || !found || string(data) != "data" {
		t.Errorf("session Find = %q, %v, %v", data, found, err)
	}
	// Search ranks through the shared in-memory index over the store.
	if _, err := knowledge.LoadEmbedded(ctx, b); err != nil {
		t.Fatal(err)
	}
	hits, err := b.retriever.Search(ctx, assistant.SearchQuery{Text: "bottleneck", Limit: 5})
	if err != nil || len(hits) == 0 {
		t.Errorf("search on PostgreSQL: %v, %v", hits, err)
	}
}

// The reader serve hands to the API and the chat follows the aliases of
// merged entities, so an answer that cited the old token still resolves.
func TestReaderResolvesMergedTokens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := openStore(ctx, &config.Config{DataDir: dir}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := knowledge.LoadEmbedded(ctx, b); err != nil {
		t.Fatal(err)
	}
	old := assistant.Token{Type: assistant.Blog, Slug: "sacks-2020-burn-multiple"}
	found, err := b.reader.Entities(ctx, []assistant.Token{old})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := found[old]; !ok || e.Token().String() != "framework:burn-multiple" {
		t.Errorf("%s resolved to %v (found %t), want framework:burn-multiple", old, e.Token(), ok)
	}
}
