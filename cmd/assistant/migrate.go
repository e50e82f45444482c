package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
)

const migrateAbout = `Without --from and --to: applies the pending migrations to the configured
database (ASSISTANT_DATABASE_URL) and exits; serve does this at start too.

With --from and --to: copies a deployment from one database to another,
typically from the single machine's SQLite file to PostgreSQL:

  assistant migrate --from sqlite://data/assistant.db --to postgres://user:pass@host/db

Both databases are migrated first (the source must exist). Then everything the
source holds is copied in one transaction on the target: workspaces, admin
users with their password hashes, API keys (their hashes; keys keep working),
the audit log, usage rows, citation events, the setup token if any, and the
knowledge base with each entity's origin (imported entities stay imported).
Admin sessions are not copied: admins log in again. The target must be empty
(it may hold what a first start leaves: the embedded knowledge base and a
setup token); a target that holds anything else is refused and left unchanged,
so running the copy twice is safe. Stop the service on the source first, or
rows written during the copy make the check below fail.

Afterwards the rows of each table are counted in both databases and printed;
any difference is an error (exit 1).`

// migrate is `assistant migrate`: apply migrations, or copy a deployment.
func migrate(ctx context.Context, e env, args []string) error {
	fs := commandFlags(e, "migrate [--from URL --to URL]", migrateAbout)
	from := fs.String("from", "", "database to copy from: a SQLite path or sqlite:// URL (or a postgres:// URL)")
	to := fs.String("to", "", "database to copy into, which must be empty: a postgres:// URL (or a SQLite path or sqlite:// URL)")
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case *from == "" && *to == "":
		db, err := openStore(ctx, cfg, e.now)
		if err != nil {
			return err
		}
		defer db.Close()
		fmt.Fprintln(e.stdout, "database is up to date")
		return nil
	case *from == "" || *to == "":
		return fmt.Errorf("%w: --from and --to go together", errUsage)
	case *from == *to:
		return fmt.Errorf("%w: --from and --to name the same database", errUsage)
	}
	return copyDeployment(ctx, e, cfg, *from, *to)
}

// copyDeployment copies the database at from into the one at to and
// verifies the row counts.
func copyDeployment(ctx context.Context, e env, cfg *config.Config, from, to string) error {
	srcCfg, dstCfg := *cfg, *cfg
	srcCfg.DatabaseURL, dstCfg.DatabaseURL = from, to
	if !srcCfg.UsesPostgres() {
		path, err := srcCfg.SQLitePath()
		if err != nil {
			return fmt.Errorf("%w: --from: %v", errUsage, err)
		}
		// Opening a SQLite file creates it: a mistyped path would copy
		// an empty database.
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("--from: no SQLite database at %s: %w", path, err)
		}
	}
	if !dstCfg.UsesPostgres() {
		if _, err := dstCfg.SQLitePath(); err != nil {
			return fmt.Errorf("%w: --to: %v", errUsage, err)
		}
	}

	src, err := openStore(ctx, &srcCfg, e.now)
	if err != nil {
		return fmt.Errorf("opening the source: %w", err)
	}
	defer src.Close()
	dst, err := openStore(ctx, &dstCfg, e.now)
	if err != nil {
		return fmt.Errorf("opening the target: %w", err)
	}
	defer dst.Close()

	fmt.Fprintf(e.stdout, "Copying %s into %s\n", redact(from), redact(to))
	if _, err := dst.LoadFrom(ctx, src); err != nil {
		if assistant.ErrorCode(err) == assistant.EConflict {
			return fmt.Errorf("nothing copied: %s", assistant.ErrorMessage(err))
		}
		return fmt.Errorf("nothing copied: %w", err)
	}
	srcCounts, err := src.RowCounts(ctx)
	if err != nil {
		return fmt.Errorf("counting the source's rows: %w", err)
	}
	dstCounts, err := dst.RowCounts(ctx)
	if err != nil {
		return fmt.Errorf("counting the target's rows: %w", err)
	}
	differ := printCounts(e.stdout, srcCounts, dstCounts)
	if len(differ) > 0 {
		return fmt.Errorf("the copy is committed, but the target's row counts differ from the source's (%s); was the source written to during the copy?", strings.Join(differ, ", "))
	}
	fmt.Fprintln(e.stdout, "Copied and verified: every table holds as many rows in the target as in the source. Admin sessions were not copied: admins log in again.")
	return nil
}

// printCounts prints the counts side by side and returns the tables whose
// counts differ.
func printCounts(w io.Writer, src, dst assistant.RowCounts) []string {
	fmt.Fprintf(w, "%-20s %10s %10s\n", "table", "source", "target")
	var differ []string
	s, d := src.Tables(), dst.Tables()
	for i := range s {
		mark := ""
		if s[i].Rows != d[i].Rows {
			mark = "  differs"
			differ = append(differ, fmt.Sprintf("%s: %d and %d", s[i].Table, s[i].Rows, d[i].Rows))
		}
		fmt.Fprintf(w, "%-20s %10d %10d%s\n", s[i].Table, s[i].Rows, d[i].Rows, mark)
	}
	return differ
}

// redact hides the password of a database URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
