package sqlite_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

func TestAccessStore(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "access.db"))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	if err := db.EnsureWorkspace(ctx, "Bad Id"); assistant.ErrorCode(err) != assistant.EInvalid {
		t.Errorf("invalid workspace id: %v", err)
	}
	for _, w := range []string{"a", "b", "a"} {
		if err := db.EnsureWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for w, want := range map[string]bool{"a": true, "b": true, "nope": false} {
		if got, err := db.WorkspaceExists(ctx, w); err != nil || got != want {
			t.Errorf("WorkspaceExists(%q) = %v, %v; want %v", w, got, err, want)
		}
	}
	_, id, hash := access.NewKey()
	k := assistant.APIKey{ID: id, Workspace: "a", Name: "k", Hash: hash, CreatedAt: now, CreatedBy: "cli"}
	if err := db.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(ctx, assistant.APIKey{ID: "x", Workspace: "nope", CreatedAt: now}); assistant.ErrorCode(err) != assistant.ENotFound {
		t.Errorf("key in a missing workspace: %v", err)
	}
	got, err := db.KeyByID(ctx, id)
	if err != nil || got.Hash != hash || got.Workspace != "a" || !got.CreatedAt.Equal(now) || got.RevokedAt != nil {
		t.Fatalf("KeyByID = %+v, %v", got, err)
	}
	if _, err := db.RevokeKey(ctx, "b", id, now); assistant.ErrorCode(err) != assistant.ENotFound {
		t.Errorf("revoking another workspace's key: %v", err)
	}
	revoked, err := db.RevokeKey(ctx, "a", id, now.Add(time.Minute))
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("RevokeKey = %+v, %v", revoked, err)
	}
	again, _ := db.RevokeKey(ctx, "", id, now.Add(time.Hour))
	if !again.RevokedAt.Equal(now.Add(time.Minute)) {
		t.Errorf("revoking twice moved the revocation time")
	}
	if ids, _ := db.RevokedSince(ctx, now); len(ids) != 1 || ids[0] != id {
		t.Errorf("RevokedSince = %v", ids)
	}
	if ids, _ := db.RevokedSince(ctx, now.Add(2*time.Minute)); len(ids) != 0 {
		t.Errorf("RevokedSince later = %v", ids)
	}
	if err := db.TouchKeys(ctx, map[string]time.Time{id: now.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	db.TouchKeys(ctx, map[string]time.Time{id: now}) // older: ignored
	if got, _ := db.KeyByID(ctx, id); got.LastUsedAt == nil || !got.LastUsedAt.Equal(now.Add(3*time.Minute)) {
		t.Errorf("last used = %v", got.LastUsedAt)
	}
	if keys, _ := db.ListKeys(ctx, "b"); len(keys) != 0 {
		t.Errorf("workspace b sees %d keys", len(keys))
	}

	u, err := db.CreateUser(ctx, assistant.User{Workspace: "a", Email: "Admin@A.test", PasswordHash: "h"})
	if err != nil || u.ID == 0 {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, assistant.User{Workspace: "a", Email: "admin@a.test", PasswordHash: "h"}); assistant.ErrorCode(err) != assistant.EConflict {
		t.Errorf("duplicate email (case-insensitive): %v", err)
	}
	if got, err := db.UserByEmail(ctx, "ADMIN@a.test"); err != nil || got.ID != u.ID {
		t.Errorf("UserByEmail: %+v %v", got, err)
	}
	if n, _ := db.CountUsers(ctx); n != 1 {
		t.Errorf("CountUsers = %d", n)
	}

	tok := access.HashSetupToken("t")
	if err := db.SetSetupToken(ctx, tok, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.ConsumeSetupToken(ctx, tok, now.Add(2*time.Hour)); ok {
		t.Error("expired setup token accepted")
	}
	if ok, _ := db.ConsumeSetupToken(ctx, tok, now); !ok {
		t.Error("valid setup token refused")
	}
	if ok, _ := db.ConsumeSetupToken(ctx, tok, now); ok {
		t.Error("setup token used twice")
	}
}

func TestUsageByDay(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "usage.db"))
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rows := []struct {
		offset time.Duration
		key    string
		status int
		source string
	}{
		{time.Hour, "k1", 200, "web"}, {2 * time.Hour, "k1", 200, "web"}, {3 * time.Hour, "k1", 429, "web"},
		{4 * time.Hour, "k1", 200, ""}, {26 * time.Hour, "k1", 502, "app"}, {time.Hour, "k2", 200, "web"},
		{-40 * 24 * time.Hour, "k1", 200, "old"},
	}
	for _, r := range rows {
		if err := db.RecordUsage(ctx, assistant.UsageRecord{At: day.Add(r.offset), Workspace: "a", KeyID: r.key,
			Endpoint: "POST /api/v1/chat", Status: r.status, Source: r.source, Latency: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.UsageByDay(ctx, "a", "k1", day.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []assistant.UsageDay{
		{Day: "2026-03-01", StatusClass: "2xx", Source: "", Requests: 1}, {Day: "2026-03-01", StatusClass: "2xx", Source: "web", Requests: 2}, {Day: "2026-03-01", StatusClass: "4xx", Source: "web", Requests: 1},
		{Day: "2026-03-02", StatusClass: "5xx", Source: "app", Requests: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("UsageByDay = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestNoPlaintextKeyInTheDatabase creates keys the way the service does and
// scans every byte of the database files for them (D16).
func TestNoPlaintextKeyInTheDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scan.db")
	db := open(t, path)
	db.EnsureWorkspace(ctx, "a")
	var plaintexts []string
	for i := range 20 {
		p, id, hash := access.NewKey()
		plaintexts = append(plaintexts, p)
		if err := db.CreateKey(ctx, assistant.APIKey{ID: id, Workspace: "a", Name: "k", Hash: hash, CreatedAt: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var all []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suffix)
		if err == nil {
			all = append(all, b...)
		}
	}
	if len(all) == 0 {
		t.Fatal("nothing to scan")
	}
	for _, p := range plaintexts {
		secret := p[len(access.KeyPrefix)+12:]
		if bytes.Contains(all, []byte(p)) || bytes.Contains(all, []byte(secret[:16])) {
			t.Fatalf("the database contains a plaintext key")
		}
	}
}

func BenchmarkVerifyUncachedSQLite(b *testing.B) {
	ctx := context.Background()
	db := open(b, filepath.Join(b.TempDir(), "bench.db"))
	db.EnsureWorkspace(ctx, "a")
	plaintext, id, hash := access.NewKey()
	db.CreateKey(ctx, assistant.APIKey{ID: id, Workspace: "a", Name: "k", Hash: hash, CreatedAt: time.Now()})
	v := access.NewVerifier(db, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for b.Loop() {
		v.Forget(id)
		if _, err := v.Verify(ctx, plaintext); err != nil {
			b.Fatal(err)
		}
	}
}
