package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/KimMachineGun/automemlimit/memlimit"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/admin"
	"github.com/constraintlab/assistant/internal/api"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
	"github.com/constraintlab/assistant/internal/config"
	"github.com/constraintlab/assistant/internal/diagnose"
	"github.com/constraintlab/assistant/internal/knowledge"
	"github.com/constraintlab/assistant/internal/llm"
	"github.com/constraintlab/assistant/internal/llm/anthropic"
	"github.com/constraintlab/assistant/internal/llm/builtin"
	"github.com/constraintlab/assistant/internal/llm/openai"
	"github.com/constraintlab/assistant/internal/telemetry"
	"github.com/constraintlab/assistant/internal/verify"
	"github.com/constraintlab/assistant/internal/webhook"
)

// shutdownGrace is how long in-flight requests get to finish after SIGTERM.
const shutdownGrace = 30 * time.Second

// tracingFlushGrace is how long the spans still queued at shutdown get to
// reach the collector.
const tracingFlushGrace = 5 * time.Second

func serve(ctx context.Context, e env, args []string) error {
	cfg, err := loadConfig(e, "serve", args, nil)
	if err != nil {
		return err
	}
	logger := newLogger(e.stderr, cfg.LogLevel)
	logger.Info("starting", "version", version, "config", cfg)
	applyMemoryLimit(e, logger, memlimit.FromCgroup)

	// Tracing, when the OTEL_* variables configure an OTLP endpoint: the
	// spans still queued are sent on the way out.
	tracing, stopTracing, err := telemetry.Setup(ctx, e.getenv, version)
	if err != nil {
		return err
	}
	if tracing != nil {
		telemetry.RouteErrors(logger)
		logger.Info("tracing on: exporting spans over OTLP/HTTP")
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushGrace)
		defer cancel()
		if err := stopTracing(flushCtx); err != nil {
			logger.Warn("tracing: the last spans were not all sent", "err", err)
		}
	}()

	db, err := openStore(ctx, cfg, e.now)
	if err != nil {
		return err
	}
	defer db.Close()

	synced, err := knowledge.LoadEmbedded(ctx, db)
	if err != nil {
		return err
	}
	logger.Info("knowledge base loaded", "inserted", synced.Inserted, "updated", synced.Updated,
		"deleted", synced.Deleted, "unchanged", synced.Unchanged)

	diagnoser, err := openDiagnoser(ctx, db)
	if err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), db.pool)

	lim, err := openLimits(ctx, cfg, logger, reg, e.now)
	if err != nil {
		return err
	}
	defer lim.Close()

	verifier := access.NewVerifier(db, e.now, logger)
	verifier.Events = lim.keyEvents()
	verifierCtx, stopVerifier := context.WithCancel(context.WithoutCancel(ctx))
	verifierDone := make(chan struct{})
	go func() { verifier.Run(verifierCtx); close(verifierDone) }()
	defer func() { stopVerifier(); <-verifierDone }() // flushes last-used times

	chatService, err := newObservedChatService(cfg, db, diagnoser, e.now, logger, llm.NewMetrics(reg))
	if err != nil {
		return err
	}

	sealer, err := webhookSealer(cfg)
	if err != nil {
		return err
	}
	webhooks := &webhook.Endpoints{Store: db, Sealer: sealer, Guard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}, Now: e.now}

	sessionStore, stopSessions := db.sessions()
	defer stopSessions()
	adminArea := &admin.Handler{
		Store: db, Keys: verifier, Sessions: admin.NewSessions(sessionStore),
		Throttle: lim.loginThrottle(), Attempts: lim.tiered("login_attempts", 0, admin.LoginAttemptsPerMinute),
		Logger: logger, Now: e.now,
		ClientIP: func(r *http.Request) string { return api.ClientIP(r, cfg.TrustedProxies).String() },
		OverHTTPS: func(r *http.Request) bool {
			return cfg.PublicHTTPS() || api.RequestIsHTTPS(r, cfg.TrustedProxies)
		},
		PublicURL: cfg.PublicURL,
		Chat:      chatService,
		// The playground's own window per admin account and workspace,
		// with the chat limit's numbers (docs/playground.md).
		PlaygroundLimiter: lim.window("playground", cfg.ChatRateLimit, cfg.ChatRateWindow),
		PlaygroundLimit:   cfg.ChatRateLimit,
		KeyRateLimit:      cfg.ChatRateLimit,
		Reviews:           db,
		PlaygroundWindow:  cfg.ChatRateWindow,
		Webhooks:          webhooks,
	}
	adminHandler, err := adminArea.Routes()
	if err != nil {
		return err
	}

	srv := &api.Server{
		Knowledge:        db.reader,
		Retriever:        db.retriever,
		Citations:        db,
		Ready:            db,
		Catalog:          diagnoser.Catalog(),
		Diagnosis:        diagnoser,
		Logger:           logger,
		Now:              e.now,
		Version:          version,
		PublicLimiter:    lim.tiered("public", cfg.PublicSoftLimit, cfg.PublicHardLimit),
		TrustedProxies:   cfg.TrustedProxies,
		CORSOrigins:      cfg.CORSOrigins,
		Metrics:          reg,
		Access:           db,
		Keys:             verifier,
		Admin:            adminHandler,
		Chat:             chatService,
		Verifier:         chatService.Checker,
		ChatLimiter:      lim.window("chat", cfg.ChatRateLimit, cfg.ChatRateWindow),
		ChatRateLimit:    cfg.ChatRateLimit,
		ChatRateWindow:   cfg.ChatRateWindow,
		AuthFailures:     lim.tiered("auth_failures", 0, api.AuthFailuresPerMinute),
		Degradable:       lim.degradable(),
		MetricsToken:     cfg.MetricsToken,
		MetricsElsewhere: cfg.MetricsAddr != "",
		Async:            db,
		AsyncQueue:       cfg.AsyncQueue,
		Reviews:          db,
		Tracing:          tracing,
	}
	// The webhook worker, the runner of asynchronous turns, the purges (webhooks, expired review turns).
	stopBackground := startBackground(ctx, cfg, db, srv, sealer, logger, e.now)
	defer stopBackground()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	httpServer := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	defer ln.Close()
	scheme := "http"
	if cfg.ServesTLS() {
		certs, err := newCertReloader(cfg.TLSCertFile, cfg.TLSKeyFile, logger, e.now)
		if err != nil {
			return err
		}
		httpServer.TLSConfig, scheme = certs.tlsConfig(), "https"
	}
	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(cfg, e, logger, srv.MetricsHandler())
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.ProfileAddr != "" {
		stop, err := serveProfiles(cfg, e, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	// Nothing can fail the start from here on, so the setup link (which
	// replaces the previous one) is printed last.
	base := scheme + "://" + displayAddr(ln.Addr())
	fmt.Fprintf(e.stdout, "assistant %s serving on %s (API docs: %s/api/assistant/docs/)\n", version, base, base)
	logger.Info("listening", "addr", ln.Addr().String(), "tls", cfg.ServesTLS())
	linkBase := base
	if cfg.PublicURL != "" {
		linkBase = cfg.PublicURL
	}
	if err := printSetupLink(ctx, e, db, linkBase, cfg.UsesPostgres()); err != nil {
		// The service is already announced as serving: a database that
		// fails this one query (a connection cut during a failover, say)
		// must not take it down. Without a link, the next start prints
		// one, or an admin is created on the command line.
		logger.Warn("could not print the setup link; restart to get one, or run: assistant admin create-user",
			"err", err)
	}

	serveErr := make(chan error, 1)
	go func() {
		if httpServer.TLSConfig != nil {
			serveErr <- httpServer.ServeTLS(ln, "", "") // the certificate comes from TLSConfig
			return
		}
		serveErr <- httpServer.Serve(ln)
	}()

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// newChatService wires the chat turn: the configured model provider, the
// store as knowledge and retriever, the diagnosis, the personas and the
// verifier (newVerifier), which POST /api/v1/verify shares.
func newChatService(cfg *config.Config, db *backend, d *diagnose.Diagnoser, now func() time.Time, logger *slog.Logger) (*chat.Service, error) {
	return newObservedChatService(cfg, db, d, now, logger, nil)
}

// newObservedChatService is newChatService with the model calls counted
// in m (nil: not counted).
func newObservedChatService(cfg *config.Config, db *backend, d *diagnose.Diagnoser, now func() time.Time, logger *slog.Logger, m *llm.Metrics) (*chat.Service, error) {
	personas, err := chat.LoadPersonas()
	if err != nil {
		return nil, err
	}
	provider, err := newProvider(cfg, logger, m)
	if err != nil {
		return nil, err
	}
	return &chat.Service{
		Provider: provider, Knowledge: db.reader, Retriever: db.retriever, Diagnoser: chat.NewDiagnosisAdapter(d),
		Checker: newVerifier(cfg, provider, logger), Personas: personas, Now: now, NewID: func() string { return "resp_" + access.RandomToken(24) },
	}, nil
}

// newVerifier returns the claim verifier: with a remote model provider
// (openai, anthropic) the model judges claims, with the builtin checker as
// its fallback on any failure; with the builtin provider, the builtin
// checker alone.
func newVerifier(cfg *config.Config, provider llm.Provider, logger *slog.Logger) verify.Verifier {
	if cfg.LLMProvider == "builtin" {
		return verify.New()
	}
	return &verify.ModelJudge{Provider: provider, Fallback: verify.New(), Logger: logger}
}

// newProvider returns the model provider ASSISTANT_LLM_PROVIDER selects.
// Its outbound client carries no ambient proxy or timeout surprises: the
// provider sets its own per-attempt timeout.
func newProvider(cfg *config.Config, logger *slog.Logger, m *llm.Metrics) (llm.Provider, error) {
	client := m.Client(cfg.LLMProvider, &http.Client{})
	var p llm.Provider
	var err error
	model := cfg.LLMModel
	switch cfg.LLMProvider {
	case "builtin":
		p, model = builtin.New(), "builtin"
	case "openai":
		p, err = openai.New(openai.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, HTTPClient: client, Logger: logger, Metrics: m})
	case "anthropic":
		p, err = anthropic.New(anthropic.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, HTTPClient: client, Logger: logger, Metrics: m})
	default:
		return nil, fmt.Errorf("ASSISTANT_LLM_PROVIDER=%s is not supported", cfg.LLMProvider)
	}
	if err != nil {
		return nil, err
	}
	// Each call is counted and, in a traced request, a span.
	return llm.Traced(m.Instrument(p, model), model), nil
}

// setupLinkLifetime is how long the first-run setup link works.
const setupLinkLifetime = time.Hour

// printSetupLink prints a one-time link that creates the first admin when
// no admin user exists yet. Each start replaces the previous link. The
// token is printed on stdout only, never logged. several (a shared
// database, so possibly several instances) adds how to do without it.
func printSetupLink(ctx context.Context, e env, store assistant.AccessStore, base string, several bool) error {
	n, err := store.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	token := access.RandomToken(32)
	if err := store.SetSetupToken(ctx, access.HashSetupToken(token), e.now().Add(setupLinkLifetime)); err != nil {
		return err
	}
	// One block, written at once and set apart by rules and blank lines,
	// so that no log line lands inside it and the link stands alone on
	// its line, ready to copy.
	rule := strings.Repeat("-", 72)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\nNo admin user yet. Create the first admin (workspace %q) within one hour at:\n\n    %s/admin/setup?token=%s\n\n",
		rule, assistant.DefaultWorkspace, base, token)
	if several {
		fmt.Fprintf(&b, "With several instances only the newest link works; or run: assistant admin create-user --workspace %s --email you@example.com\n",
			assistant.DefaultWorkspace)
	}
	fmt.Fprintf(&b, "%s\n\n", rule)
	_, err = io.WriteString(e.stdout, b.String())
	return err
}

// displayAddr turns a listener address into one a browser can open.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		port := 0
		if ok {
			port = tcp.Port
		}
		return fmt.Sprintf("localhost:%d", port)
	}
	return tcp.String()
}

// serveProfiles starts the listener of ASSISTANT_PROFILE_ADDR, which
// serves Go's runtime profiles (net/http/pprof) on a mux of its own, so
// they are never reachable through the API's address. It returns the
// function that closes it.
func serveProfiles(cfg *config.Config, e env, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", cfg.ProfileAddr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s (ASSISTANT_PROFILE_ADDR): %w", cfg.ProfileAddr, err)
	}
	if !cfg.ProfileOnLoopback() {
		logger.Warn("runtime profiles are served beyond loopback, without authentication", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	fmt.Fprintf(e.stdout, "runtime profiles on http://%s/debug/pprof/\n", displayAddr(ln.Addr()))
	logger.Info("serving runtime profiles", "addr", ln.Addr().String())
	return func() { _ = server.Close() }, nil
}

// serveMetrics starts the listener of ASSISTANT_METRICS_ADDR, which serves
// GET /metrics alone, on a mux of its own. It returns the function that
// closes it.
func serveMetrics(cfg *config.Config, e env, logger *slog.Logger, metrics http.Handler) (func(), error) {
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s (ASSISTANT_METRICS_ADDR): %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	fmt.Fprintf(e.stdout, "metrics on http://%s/metrics\n", displayAddr(ln.Addr()))
	logger.Info("serving metrics", "addr", ln.Addr().String())
	return func() { _ = server.Close() }, nil
}
