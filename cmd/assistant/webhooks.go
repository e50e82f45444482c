package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/webhook"
)

// webhookKeyFile is where, on SQLite without ASSISTANT_WEBHOOK_KEY, the
// key that seals webhook signing secrets is kept (in the data dir).
const webhookKeyFile = "webhook.key"

// webhookRetention is how long finished deliveries, their events and
// completed asynchronous turns are kept.
const webhookRetention = 7 * 24 * time.Hour

// webhookSettings: the settings the webhooks subcommands use.
var webhookSettings = append(append([]string{}, config.StoreFlags...), "webhook-key", "webhook-allow-private")

// webhookSealer returns the sealer of signing secrets: from
// ASSISTANT_WEBHOOK_KEY; on SQLite without it, from the data dir's key
// file, created once; on PostgreSQL without it, nil (webhooks off: every
// instance must hold the same key).
func webhookSealer(cfg *config.Config) (*webhook.Sealer, error) {
	if cfg.WebhookKey != "" {
		return webhook.NewSealer(cfg.WebhookKey)
	}
	if cfg.UsesPostgres() {
		return nil, nil
	}
	path := filepath.Join(cfg.DataDir, webhookKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 32)
		rand.Read(raw)
		key := base64.StdEncoding.EncodeToString(raw)
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return webhookSealer(cfg) // another process wrote it first
		}
		if err != nil {
			return nil, fmt.Errorf("creating %s: %w", path, err)
		}
		_, err = f.WriteString(key + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return webhook.NewSealer(key)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return webhook.NewSealer(strings.TrimSpace(string(b)))
}

// instanceID names this process in leases of deliveries and turns.
func instanceID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), access.RandomToken(6))
}

// startBackground starts what serve runs beside the HTTP server: the
// webhook delivery worker (when webhooks are on), the runner of
// asynchronous turns, the hourly purge of old deliveries and turns and
// the sweep of expired review turns. It returns the function that stops them and waits.
func startBackground(ctx context.Context, cfg *config.Config, db *backend, srv *api.Server, sealer *webhook.Sealer, logger *slog.Logger, now func() time.Time) func() {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	owner := instanceID()
	// On SQLite this process is the only one serving the file: leases
	// still held were a killed predecessor's, so its work is due now.
	if r, ok := db.store.(interface {
		ReleaseLeases(context.Context) (int, error)
	}); ok && !cfg.UsesPostgres() {
		if n, err := r.ReleaseLeases(ctx); err != nil {
			logger.Warn("releasing the leases of a previous run failed; they run out on their own", "err", err)
		} else if n > 0 {
			logger.Info("took over the deliveries and turns of a previous run", "count", n)
		}
	}
	var done []chan struct{}
	start := func(f func(context.Context)) {
		ch := make(chan struct{})
		done = append(done, ch)
		go func() { defer close(ch); f(ctx) }()
	}
	var worker *webhook.Worker
	if sealer != nil {
		worker = &webhook.Worker{Store: db, Sealer: sealer, Client: webhook.NewClient(webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}, nil),
			Logger: logger, Now: now, Owner: owner, UserAgent: "assistant-webhooks/" + version,
			Backoff: webhook.Backoff{Base: cfg.WebhookRetryBase, Max: time.Hour, Period: webhook.DefaultBackoff.Period}}
		start(worker.Run)
	} else {
		logger.Warn("webhooks are off: set ASSISTANT_WEBHOOK_KEY (the same on every instance) to turn them on")
	}
	runner := &api.AsyncRunner{Server: srv, Owner: owner, Workers: cfg.AsyncWorkers}
	if worker != nil {
		runner.Completed = worker.Wake
	}
	srv.AsyncWake = runner.Wake
	start(runner.Run)
	start(func(ctx context.Context) {
		sweep(ctx, time.Hour, func(ctx context.Context) (int, error) { return db.PurgeWebhooks(ctx, now().Add(-webhookRetention)) },
			"purging old webhook deliveries failed", "purged old webhook deliveries and turns", "rows", logger)
	})
	// Kept review turns past their retention period (review.go).
	start(func(ctx context.Context) { sweepReviews(ctx, db, now, reviewSweepEvery, logger) })
	return func() {
		cancel()
		for _, ch := range done {
			<-ch
		}
	}
}

// webhooksCommand is `assistant webhooks ...`.
func webhooksCommand(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "webhooks", webhooksSubcommands(), args)
}

func webhooksSubcommands() []command {
	return []command{
		{"create", "add an endpoint and print its signing secret once: --workspace W --url URL [--events key.created,...] [--json]", webhooksCreate},
		{"list", "list a workspace's endpoints: --workspace W [--json]", webhooksList},
		{"roll-secret", "give an endpoint a new signing secret, printed once: roll-secret ID --workspace W", webhooksRollSecret},
		{"enable", "turn an endpoint on: enable ID --workspace W", func(ctx context.Context, e env, args []string) error { return webhooksSetEnabled(ctx, e, args, true) }},
		{"disable", "turn an endpoint off (its events wait): disable ID --workspace W", func(ctx context.Context, e env, args []string) error { return webhooksSetEnabled(ctx, e, args, false) }},
		{"delete", "delete an endpoint and its delivery log: delete ID --workspace W", webhooksDelete},
		{"deliveries", "the delivery log, newest first: --workspace W [--endpoint ID] [--limit N] [--json]", webhooksDeliveries},
		{"resend", "deliver again: resend DELIVERY_ID --workspace W", webhooksResend},
	}
}

// openWebhooks parses a webhooks subcommand's command line and opens the
// store and the endpoints' manager.
func openWebhooks(ctx context.Context, e env, usage string, args []string, workspace *string, define func(fs *flag.FlagSet)) (*backend, *webhook.Endpoints, []string, error) {
	fs := commandFlags(e, usage, "")
	fs.StringVar(workspace, "workspace", "", "the endpoint's workspace")
	if define != nil {
		define(fs)
	}
	cfg, err := parseConfig(e, fs, args, webhookSettings)
	if err != nil {
		return nil, nil, nil, err
	}
	if *workspace == "" {
		return nil, nil, nil, fmt.Errorf("%w: --workspace is required", errUsage)
	}
	sealer, err := webhookSealer(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return nil, nil, nil, err
	}
	m := &webhook.Endpoints{Store: db, Sealer: sealer, Guard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}, Now: e.now}
	return db, m, fs.Args(), nil
}

func cliAudit(ctx context.Context, db *backend, e env, workspace, action, target, detail string) {
	db.RecordAudit(ctx, assistant.AuditEvent{At: e.now().UTC(), Workspace: workspace, Actor: "cli", Action: action, Target: target, Detail: detail})
}

func webhooksCreate(ctx context.Context, e env, args []string) error {
	var workspace, url, events string
	var asJSON bool
	db, m, rest, err := openWebhooks(ctx, e, "webhooks create --workspace W --url URL [--events T,...] [--json]", args, &workspace, func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "the https URL that receives the events")
		fs.StringVar(&events, "events", "", "comma-separated event types ("+strings.Join(assistant.EventTypes, ", ")+"); empty for all")
		fs.BoolVar(&asJSON, "json", false, "print {id, workspace, url, events, secret} as JSON")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if len(rest) > 0 || url == "" {
		return fmt.Errorf("%w: expected: assistant webhooks create --workspace W --url URL", errUsage)
	}
	types, err := webhook.ParseEventTypes(events)
	if err != nil {
		return err
	}
	if ok, err := db.WorkspaceExists(ctx, workspace); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: workspace %q does not exist", errUsage, workspace)
	}
	ep, secret, err := m.Create(ctx, workspace, url, types, "cli")
	if err != nil {
		return err
	}
	cliAudit(ctx, db, e, workspace, "webhook.created", ep.ID, ep.URL+" ("+strings.Join(ep.EventTypes, ", ")+")")
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"id": ep.ID, "workspace": workspace, "url": ep.URL, "events": ep.EventTypes, "secret": secret})
	}
	fmt.Fprintf(e.stdout, "Created webhook endpoint %s for %s (%s). Its signing secret is shown only now:\n", ep.ID, ep.URL, strings.Join(ep.EventTypes, ", "))
	fmt.Fprintln(e.stdout, secret)
	return nil
}

func webhooksList(ctx context.Context, e env, args []string) error {
	var workspace string
	var asJSON bool
	db, _, rest, err := openWebhooks(ctx, e, "webhooks list --workspace W [--json]", args, &workspace, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	eps, err := db.WebhookEndpoints(ctx, workspace)
	if err != nil {
		return err
	}
	if asJSON {
		type row struct {
			ID        string    `json:"id"`
			URL       string    `json:"url"`
			Events    []string  `json:"events"`
			Enabled   bool      `json:"enabled"`
			CreatedAt time.Time `json:"created_at"`
			CreatedBy string    `json:"created_by"`
		}
		rows := []row{}
		for _, ep := range eps {
			rows = append(rows, row{ep.ID, ep.URL, ep.EventTypes, ep.Enabled, ep.CreatedAt, ep.CreatedBy})
		}
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, ep := range eps {
		state := "enabled"
		if !ep.Enabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ep.ID, state, ep.URL, strings.Join(ep.EventTypes, ","))
	}
	return tw.Flush()
}

// oneArg is the single positional argument of a subcommand.
func oneArg(rest []string, what string) (string, error) {
	if len(rest) != 1 {
		return "", fmt.Errorf("%w: expected one %s", errUsage, what)
	}
	return rest[0], nil
}

// endpointCommand runs a subcommand that acts on one endpoint of a
// workspace (`webhooks VERB ID --workspace W`): it opens the store, reads
// the id and hands both to act.
func endpointCommand(ctx context.Context, e env, verb string, args []string,
	act func(db *backend, m *webhook.Endpoints, workspace, id string) error) error {
	var workspace string
	db, m, rest, err := openWebhooks(ctx, e, "webhooks "+verb+" ID --workspace W", args, &workspace, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := oneArg(rest, "endpoint id")
	if err != nil {
		return err
	}
	return act(db, m, workspace, id)
}

func webhooksRollSecret(ctx context.Context, e env, args []string) error {
	return endpointCommand(ctx, e, "roll-secret", args, func(db *backend, m *webhook.Endpoints, workspace, id string) error {
		secret, err := m.RollSecret(ctx, workspace, id)
		if err != nil {
			return err
		}
		cliAudit(ctx, db, e, workspace, "webhook.secret_rolled", id, "")
		fmt.Fprintf(e.stdout, "Endpoint %s signs with a new secret from now on; the old one no longer verifies. Shown only now:\n%s\n", id, secret)
		return nil
	})
}

func webhooksSetEnabled(ctx context.Context, e env, args []string, on bool) error {
	verb := map[bool]string{true: "enable", false: "disable"}[on]
	return endpointCommand(ctx, e, verb, args, func(db *backend, m *webhook.Endpoints, workspace, id string) error {
		if _, err := m.SetEnabled(ctx, workspace, id, on); err != nil {
			return err
		}
		cliAudit(ctx, db, e, workspace, "webhook."+verb+"d", id, "")
		fmt.Fprintf(e.stdout, "Endpoint %s is %sd.\n", id, verb)
		return nil
	})
}

func webhooksDelete(ctx context.Context, e env, args []string) error {
	return endpointCommand(ctx, e, "delete", args, func(db *backend, _ *webhook.Endpoints, workspace, id string) error {
		if err := db.DeleteWebhookEndpoint(ctx, workspace, id); err != nil {
			return err
		}
		cliAudit(ctx, db, e, workspace, "webhook.deleted", id, "")
		fmt.Fprintf(e.stdout, "Deleted endpoint %s and its delivery log.\n", id)
		return nil
	})
}

func webhooksDeliveries(ctx context.Context, e env, args []string) error {
	var workspace, endpoint string
	var limit int
	var asJSON bool
	db, _, rest, err := openWebhooks(ctx, e, "webhooks deliveries --workspace W [--endpoint ID] [--limit N] [--json]", args, &workspace, func(fs *flag.FlagSet) {
		fs.StringVar(&endpoint, "endpoint", "", "only this endpoint's deliveries")
		fs.IntVar(&limit, "limit", 50, "how many, newest first (1 to 1000)")
		fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if len(rest) > 0 || limit < 1 || limit > 1000 {
		return fmt.Errorf("%w: expected: assistant webhooks deliveries --workspace W [--endpoint ID] [--limit 1..1000]", errUsage)
	}
	ds, err := db.Deliveries(ctx, workspace, endpoint, limit)
	if err != nil {
		return err
	}
	if asJSON {
		type row struct {
			ID          int64      `json:"id"`
			EventID     string     `json:"event_id"`
			EndpointID  string     `json:"endpoint_id"`
			EventType   string     `json:"event_type"`
			Status      string     `json:"status"`
			Attempts    int        `json:"attempts"`
			LastStatus  int        `json:"last_status"`
			LastError   string     `json:"last_error"`
			ResponseMS  int64      `json:"response_ms"`
			NextAttempt time.Time  `json:"next_attempt_at"`
			DeliveredAt *time.Time `json:"delivered_at"`
			CreatedAt   time.Time  `json:"created_at"`
		}
		rows := []row{}
		for _, d := range ds {
			rows = append(rows, row{d.ID, d.EventID, d.EndpointID, d.EventType, d.Status, d.Attempts, d.LastStatus, d.LastError,
				d.ResponseTime.Milliseconds(), d.NextAttemptAt, d.DeliveredAt, d.CreatedAt})
		}
		return json.NewEncoder(e.stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, d := range ds {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\tattempts %d\t%s\n", d.ID, d.Status, d.EventType, d.EndpointID, d.EventID, d.Attempts, d.LastError)
	}
	return tw.Flush()
}

func webhooksResend(ctx context.Context, e env, args []string) error {
	var workspace string
	db, _, rest, err := openWebhooks(ctx, e, "webhooks resend DELIVERY_ID --workspace W", args, &workspace, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	arg, err := oneArg(rest, "delivery id")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not a delivery id (a number; see webhooks deliveries)", errUsage, arg)
	}
	if err := db.ResendDelivery(ctx, workspace, id, e.now()); err != nil {
		return err
	}
	cliAudit(ctx, db, e, workspace, "webhook.resent", arg, "")
	fmt.Fprintf(e.stdout, "Delivery %s is due again; a running service sends it within a second.\n", arg)
	return nil
}

// keysRoll is `assistant keys roll ID [--grace D]`: a replacement with the
// same name (and lifetime), printed once; the old key is revoked at once
// or expires after the grace period.
func keysRoll(ctx context.Context, e env, args []string) error {
	var grace time.Duration
	var asJSON bool
	db, rest, err := openAccess(ctx, e, "keys roll ID [--grace D] [--json]", args, func(fs *flag.FlagSet) {
		fs.DurationVar(&grace, "grace", 0, "how long the old key keeps working, e.g. 24h; 0 revokes it now")
		fs.BoolVar(&asJSON, "json", false, "print {id, workspace, name, key, replaces} as JSON")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if len(rest) != 1 || !access.ValidKeyID(rest[0]) || grace < 0 {
		return fmt.Errorf("%w: expected: assistant keys roll ID [--grace 24h]", errUsage)
	}
	old, err := db.KeyByID(ctx, rest[0])
	if err != nil {
		return err
	}
	now := e.now().UTC()
	plaintext, id, hash := access.NewKey()
	k := assistant.APIKey{ID: id, Workspace: old.Workspace, Name: old.Name, Hash: hash, CreatedAt: now, CreatedBy: "cli", RateLimit: old.RateLimit}
	if old.ExpiresAt != nil {
		exp := now.Add(old.ExpiresAt.Sub(old.CreatedAt))
		k.ExpiresAt = &exp
	}
	if _, err := db.RollKey(ctx, old.Workspace, old.ID, k, now.Add(grace)); err != nil {
		return err
	}
	cliAudit(ctx, db, e, old.Workspace, "key.created", id, k.Name+" (replaces "+old.ID+")")
	if grace == 0 {
		cliAudit(ctx, db, e, old.Workspace, "key.revoked", old.ID, old.Name+" (rolled)")
	}
	cliAudit(ctx, db, e, old.Workspace, "key.rolled", old.ID, fmt.Sprintf("replaced by %s; grace %s", id, grace))
	announceKeyChange(ctx, e, old.ID)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]string{"id": id, "workspace": old.Workspace, "name": k.Name, "key": plaintext, "replaces": old.ID})
	}
	fmt.Fprintf(e.stdout, "Rolled key %s: its replacement %s is shown only now; store it safely:\n%s\n", old.ID, id, plaintext)
	return nil
}
