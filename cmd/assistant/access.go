package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
)

// keysCommand is `assistant keys create|list|revoke|roll` (D25).
func keysCommand(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "keys", []command{
		{"create", "create an API key and print it once: --workspace W --name N [--expires-in 720h] [--json | --quiet]", keysCreate},
		{"list", "list a workspace's keys, key id first: --workspace W [--json]", keysList},
		{"revoke", "revoke a key by its 12-character id: revoke ID (a key already revoked is reported, exit 0)", keysRevoke},
		{"roll", "replace a key by a new one printed once: roll ID [--grace 24h] (0: the old key is revoked now)", keysRoll},
	}, args)
}

// adminCommand is `assistant admin create-user` (D25).
func adminCommand(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "admin", []command{
		{"create-user", "create an admin user: --workspace W --email E; the password is read from stdin, or generated and printed once", adminCreateUser},
	}, args)
}

// openAccess parses the command line of a keys or admin subcommand (define
// adds its own flags) and opens the store; it returns the positional
// arguments.
func openAccess(ctx context.Context, e env, usage string, args []string, define func(fs *flag.FlagSet)) (*backend, []string, error) {
	fs := commandFlags(e, usage, "")
	if define != nil {
		define(fs)
	}
	cfg, err := parseConfig(e, fs, args, storeSettings)
	if err != nil {
		return nil, nil, err
	}
	db, err := openStore(ctx, cfg, e.now)
	return db, fs.Args(), err
}

func keysCreate(ctx context.Context, e env, args []string) error {
	var workspace, name string
	var expiresIn time.Duration
	var asJSON, quiet bool
	var limit int
	db, rest, err := openAccess(ctx, e, "keys create --workspace W --name N [--expires-in D] [--limit N] [--json | --quiet]", args, func(fs *flag.FlagSet) {
		fs.StringVar(&workspace, "workspace", "", "workspace of the key (created if it does not exist)")
		fs.StringVar(&name, "name", "", "a name that says what the key is for")
		fs.DurationVar(&expiresIn, "expires-in", 0, "lifetime of the key, e.g. 720h; 0 for no expiry")
		fs.IntVar(&limit, "limit", 0, "the key's own limit of requests per minute (chat, verify, completions, MCP calls); 0 for the service's default")
		fs.BoolVar(&asJSON, "json", false, "print {id, workspace, name, key} as JSON")
		fs.BoolVar(&quiet, "quiet", false, "print the key alone, for KEY=$(assistant keys create ... --quiet)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	switch {
	case len(rest) > 0:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	case workspace == "" || strings.TrimSpace(name) == "":
		return fmt.Errorf("%w: --workspace and --name are required", errUsage)
	case expiresIn < 0:
		return fmt.Errorf("%w: --expires-in must not be negative", errUsage)
	case !assistant.ValidKeyRateLimit(limit):
		return fmt.Errorf("%w: --limit must be 0 (the default) to %d", errUsage, assistant.MaxKeyRateLimit)
	case asJSON && quiet:
		return fmt.Errorf("%w: --json and --quiet do not go together", errUsage)
	}
	if err := db.EnsureWorkspace(ctx, workspace); err != nil {
		return err
	}
	plaintext, id, hash := access.NewKey()
	now := e.now().UTC()
	k := assistant.APIKey{ID: id, Workspace: workspace, Name: strings.TrimSpace(name), Hash: hash, CreatedAt: now, CreatedBy: "cli", RateLimit: limit}
	if expiresIn > 0 {
		exp := now.Add(expiresIn)
		k.ExpiresAt = &exp
	}
	if err := db.CreateKey(ctx, k); err != nil {
		return err
	}
	db.RecordAudit(ctx, assistant.AuditEvent{At: now, Workspace: workspace, Actor: "cli", Action: "key.created", Target: id, Detail: k.Name})
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]string{"id": id, "workspace": workspace, "name": k.Name, "key": plaintext})
	}
	if quiet {
		fmt.Fprintln(e.stdout, plaintext)
		return nil
	}
	fmt.Fprintf(e.stdout, "Created key %s %q in workspace %s. It is shown only now; store it safely:\n", id, k.Name, workspace)
	fmt.Fprintln(e.stdout, plaintext)
	return nil
}

func keysList(ctx context.Context, e env, args []string) error {
	var workspace string
	var asJSON bool
	db, rest, err := openAccess(ctx, e, "keys list --workspace W [--json]", args, func(fs *flag.FlagSet) {
		fs.StringVar(&workspace, "workspace", "", "workspace whose keys to list")
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if workspace == "" || len(rest) > 0 {
		return fmt.Errorf("%w: expected: assistant keys list --workspace W", errUsage)
	}
	if ok, err := db.WorkspaceExists(ctx, workspace); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: workspace %q does not exist (keys create makes it)", errUsage, workspace)
	}
	keys, err := db.ListKeys(ctx, workspace)
	if err != nil {
		return err
	}
	if len(keys) == 0 && !asJSON {
		fmt.Fprintf(e.stderr, "no keys in workspace %s\n", workspace)
		return nil
	}
	now := e.now()
	if asJSON {
		type row struct {
			ID         string     `json:"id"`
			Workspace  string     `json:"workspace"`
			Name       string     `json:"name"`
			Status     string     `json:"status"`
			CreatedAt  time.Time  `json:"created_at"`
			CreatedBy  string     `json:"created_by"`
			ExpiresAt  *time.Time `json:"expires_at"`
			RevokedAt  *time.Time `json:"revoked_at"`
			LastUsedAt *time.Time `json:"last_used_at"`
			RateLimit  *int       `json:"rate_limit"`
		}
		rows := []row{}
		for _, k := range keys {
			var limit *int
			if k.RateLimit > 0 {
				limit = &k.RateLimit
			}
			rows = append(rows, row{k.ID, k.Workspace, k.Name, k.Status(now), k.CreatedAt, k.CreatedBy, k.ExpiresAt, k.RevokedAt, k.LastUsedAt, limit})
		}
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, k := range keys {
		limit := "default limit"
		if k.RateLimit > 0 {
			limit = fmt.Sprintf("limit %d/min", k.RateLimit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tcreated %s\tlast used %s\t%s\n", k.ID, k.Status(now), k.Name,
			k.CreatedAt.UTC().Format(time.RFC3339), formatOptional(k.LastUsedAt), limit)
	}
	return tw.Flush()
}

func keysRevoke(ctx context.Context, e env, args []string) error {
	db, rest, err := openAccess(ctx, e, "keys revoke ID", args, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if len(rest) != 1 || !access.ValidKeyID(rest[0]) {
		return fmt.Errorf("%w: expected: assistant keys revoke ID (the 12-character key id)", errUsage)
	}
	k, err := db.KeyByID(ctx, rest[0])
	if assistant.ErrorCode(err) == assistant.ENotFound {
		return fmt.Errorf("no key with id %s ('assistant keys list --workspace W' lists a workspace's keys)", rest[0])
	} else if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		// Revoking is idempotent: the key is revoked, as asked; the first
		// revocation time stands and nothing is written or audited again.
		fmt.Fprintf(e.stdout, "Key %s %q of workspace %s was already revoked at %s; nothing changed.\n",
			k.ID, k.Name, k.Workspace, k.RevokedAt.UTC().Format(time.RFC3339))
		return nil
	}
	now := e.now().UTC()
	k, err = db.RevokeKey(ctx, "", rest[0], now)
	if err != nil {
		return err
	}
	db.RecordAudit(ctx, assistant.AuditEvent{At: now, Workspace: k.Workspace, Actor: "cli", Action: "key.revoked", Target: k.ID})
	announceKeyChange(ctx, e, k.ID)
	fmt.Fprintf(e.stdout, "Revoked key %s %q of workspace %s.\n", k.ID, k.Name, k.Workspace)
	return nil
}

func adminCreateUser(ctx context.Context, e env, args []string) error {
	var workspace, email string
	db, rest, err := openAccess(ctx, e, "admin create-user --workspace W --email E", args, func(fs *flag.FlagSet) {
		fs.StringVar(&workspace, "workspace", "", "workspace the user administers (created if it does not exist)")
		fs.StringVar(&email, "email", "", "the user's email, their login")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	email = strings.TrimSpace(email)
	if workspace == "" || !access.ValidEmail(email) || len(rest) > 0 {
		return fmt.Errorf("%w: expected: assistant admin create-user --workspace W --email E (password on stdin)", errUsage)
	}
	password, generated, err := readPassword(e)
	if err != nil {
		return err
	}
	if err := access.CheckPasswordPolicy(password); err != nil {
		return err
	}
	if err := db.EnsureWorkspace(ctx, workspace); err != nil {
		return err
	}
	if _, err := db.CreateUser(ctx, assistant.User{Workspace: workspace, Email: email, PasswordHash: access.HashPassword(password)}); err != nil {
		return err
	}
	db.RecordAudit(ctx, assistant.AuditEvent{At: e.now(), Workspace: workspace, Actor: "cli", Action: "user.created", Target: email})
	fmt.Fprintf(e.stdout, "Created admin %s of workspace %s.\n", email, workspace)
	if generated {
		fmt.Fprintln(e.stdout, "Generated password (shown only now):")
		fmt.Fprintln(e.stdout, password)
	}
	return nil
}

// readPassword reads the first line of stdin; with nothing there it
// generates a password.
func readPassword(e env) (password string, generated bool, err error) {
	if e.stdin != nil {
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", false, err
		}
		if password = strings.TrimRight(line, "\r\n"); password != "" {
			return password, false, nil
		}
	}
	return access.GeneratePassword(), true, nil
}

func formatOptional(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
