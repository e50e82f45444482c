package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/sqlite"
	"github.com/constraintlab/assistant/internal/storetest"
)

// TestConformance runs the suite every store passes.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"), func() time.Time { return time.Unix(1_700_000_000, 0) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
