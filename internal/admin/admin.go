// Package admin is the server-rendered admin area at /admin: first-run
// setup, login and logout, and /admin/integrations, where an admin creates,
// sees (once), revokes and watches the usage of their workspace's API keys.
//
// Pages are html/template with embedded assets (no CDN, no inline script).
// Sessions come from scs; cross-site form posts are refused by net/http's
// CrossOriginProtection; forms are url-encoded bodies of at most
// MaxFormBytes; logins and setup are limited per address, failed logins go
// through an assistant.LoginThrottle and every password hash through a
// bounded access.HashLimiter; every key and login event is written to the
// audit log (D17). docs/security.md describes the limits.
package admin

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/constraintlab/assistant/internal/access"
	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/ratelimit"
	"github.com/constraintlab/assistant/internal/webhook"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves /admin/.
type Handler struct {
	Store    assistant.AccessStore
	Keys     *access.Verifier // evicts revoked keys at once, on every instance
	Sessions *scs.SessionManager
	// Throttle counts failed logins (access.LoginThrottle in one process;
	// a shared one across instances).
	Throttle assistant.LoginThrottle
	Logger   *slog.Logger
	Now      func() time.Time
	// ClientIP returns the client address of a request (the same rule as
	// the API's limits).
	ClientIP func(*http.Request) string
	// Hashes bounds the password hashes running at once (optional:
	// access.NewHashLimiter(0) by default).
	Hashes *access.HashLimiter
	// Attempts limits POSTs to the login and setup forms per client
	// address (optional: LoginAttemptsPerMinute a minute by default).
	Attempts assistant.TieredLimiter
	// Chat runs the turns of the playground at /admin/playground
	// (optional: without it the playground says it is unavailable).
	Chat ChatRunner
	// PlaygroundLimiter counts the playground's turns in a window of
	// their own per admin account and workspace: PlaygroundLimit turns
	// (0: no limit) per rolling PlaygroundWindow, which the limiter must
	// count over (optional: PlaygroundDefaultLimit a minute in process).
	PlaygroundLimiter assistant.Limiter
	PlaygroundLimit   int
	PlaygroundWindow  time.Duration
	// KeyRateLimit, optional, is the service's per-key limit, shown for
	// the keys that have no limit of their own.
	KeyRateLimit int
	// Reviews, optional, holds the workspaces' conversation-review
	// settings and the turns kept (/admin/review, review.go); the
	// playground keeps its turns there too. Store's when it has them.
	Reviews assistant.ReviewStore
	// OverHTTPS reports whether a request reached the service over https,
	// which makes the session cookie Secure (optional: the request came
	// over TLS to this process). Serve also believes trusted proxies and
	// the configured public URL.
	OverHTTPS func(*http.Request) bool
	// Webhooks manages the workspace's webhook endpoints at
	// /admin/webhooks (optional: without it the page is not offered).
	Webhooks *webhook.Endpoints
	// PublicURL is where users reach the service (ASSISTANT_PUBLIC_URL),
	// filled into the snippets of the key-created page (optional: the
	// scheme and host the request came with).
	PublicURL string

	pages map[string]*template.Template
	// sealer encrypts the plaintext of a key just created while it waits
	// in the session for its one page view; its key lives only in this
	// process's memory, so nothing in the database can reveal the key.
	sealer cipher.AEAD
}

// Limits of the admin area (docs/security.md).
const (
	// MaxFormBytes bounds the body of every admin form.
	MaxFormBytes = 64 << 10
	// LoginAttemptsPerMinute bounds POSTs to /admin/login and
	// /admin/setup per client address (IPv6: per /64).
	LoginAttemptsPerMinute = 20
)

// Session keys.
const (
	sessUserEmail = "email"
	sessWorkspace = "workspace"
	sessFlash     = "flash"
	sessNewKey    = "new_key"    // the key just created, sealed (see Handler.sealer), shown once
	sessNewKeyID  = "new_key_id" // its id
)

// NewSessions returns the session manager of the admin area: HttpOnly,
// SameSite=Lax cookies that live 12 hours (idle 2 hours), stored by store.
func NewSessions(store scs.Store) *scs.SessionManager {
	s := scs.New()
	s.Store = store
	s.Lifetime = 12 * time.Hour
	s.IdleTimeout = 2 * time.Hour
	s.Cookie.Name = "assistant_admin"
	s.Cookie.HttpOnly = true
	s.Cookie.SameSite = http.SameSiteLaxMode
	s.Cookie.Path = "/admin"
	return s
}

// Routes returns the admin area's handler, to be mounted at /admin/.
func (h *Handler) Routes() (http.Handler, error) {
	if err := h.parseTemplates(); err != nil {
		return nil, err
	}
	if h.Hashes == nil {
		h.Hashes = access.NewHashLimiter(0)
	}
	if h.Attempts == nil {
		h.Attempts = ratelimit.NewTiered(0, LoginAttemptsPerMinute, time.Minute, h.Now)
	}
	if r, ok := h.Store.(assistant.ReviewStore); ok && h.Reviews == nil {
		h.Reviews = r
	}
	if h.PlaygroundLimiter == nil {
		h.PlaygroundLimit, h.PlaygroundWindow = PlaygroundDefaultLimit, time.Minute
		h.PlaygroundLimiter = ratelimit.NewSlidingWindow(h.PlaygroundLimit, h.PlaygroundWindow, h.Now)
	}
	var secret [32]byte
	rand.Read(secret[:])
	block, err := aes.NewCipher(secret[:])
	if err != nil {
		return nil, err
	}
	if h.sealer, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /admin/static/", h.noListing(http.StripPrefix("/admin/static/", http.FileServerFS(static))))
	mux.HandleFunc("GET /admin/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
	})
	mux.Handle("GET /admin/setup", h.page(h.setupForm))
	mux.Handle("POST /admin/setup", h.page(h.setup))
	mux.Handle("GET /admin/login", h.page(h.loginForm))
	mux.Handle("POST /admin/login", h.page(h.login))
	mux.Handle("POST /admin/logout", h.page(h.logout))
	mux.Handle("GET /admin/integrations", h.page(h.requireUser(h.integrations)))
	mux.Handle("POST /admin/integrations/keys", h.page(h.requireUser(h.createKey)))
	mux.Handle("GET /admin/integrations/keys/{id}/created", h.page(h.requireUser(h.createdKey)))
	mux.Handle("GET /admin/integrations/keys/{id}/revoke", h.page(h.requireUser(h.revokeForm)))
	mux.Handle("POST /admin/integrations/keys/{id}/revoke", h.page(h.requireUser(h.revokeKey)))
	mux.Handle("GET /admin/integrations/keys/{id}/usage", h.page(h.requireUser(h.usage)))
	// The playground (playground.go): a page and its JSON endpoint.
	if err := h.addPlaygroundPage(); err != nil {
		return nil, err
	}
	mux.Handle("GET /admin/playground", h.page(h.requireUser(h.playground)))
	mux.HandleFunc("POST "+playgroundChatPath, h.playgroundChat)
	mux.Handle("GET /admin/audit", h.page(h.requireUser(h.auditLog)))
	mux.Handle("GET /admin/password", h.page(h.requireUser(h.passwordForm)))
	mux.Handle("POST /admin/password", h.page(h.requireUser(h.changePassword)))
	mux.Handle("GET /admin/usage", h.page(h.requireUser(h.workspaceUsage)))
	mux.Handle("GET /admin/review", h.page(h.requireUser(h.needReviews(h.reviewForm))))
	mux.Handle("POST /admin/review", h.page(h.requireUser(h.needReviews(h.setReview))))
	mux.Handle("GET /admin/review/{id}", h.page(h.requireUser(h.needReviews(h.reviewedTurn))))
	mux.Handle("POST /admin/review/{id}/delete", h.page(h.requireUser(h.needReviews(h.deleteReviewedTurn))))
	mux.Handle("POST /admin/review/delete-all", h.page(h.requireUser(h.needReviews(h.deleteReviewedTurns))))
	mux.Handle("GET /admin/integrations/keys/{id}/roll", h.page(h.requireUser(h.rollForm)))
	mux.Handle("POST /admin/integrations/keys/{id}/roll", h.page(h.requireUser(h.rollKey)))
	h.addWebhookRoutes(mux)
	mux.Handle("/admin/", h.page(func(w http.ResponseWriter, r *http.Request) error {
		return errNotFound
	}))

	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusForbidden, "Request refused",
			"This form was submitted from another site, so it was refused. Open the admin area directly and try again.")
	}))
	return securityHeaders(h.secureCookies(csrf.Handler(h.Sessions.LoadAndSave(h.formsOrJSON(mux))))), nil
}

// noListing answers 404 for directories: the static files are served,
// their listing is not.
func (h *Handler) noListing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			h.renderError(w, r, http.StatusNotFound, errNotFound.title, errNotFound.message)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// formsOnly lets through, on every method with a body, only
// application/x-www-form-urlencoded bodies of at most MaxFormBytes, parsed
// here: anything else is refused (415, 413) before a byte of it is parsed,
// so no multipart form is ever spooled to disk. Should one be parsed
// anyway, its files are removed when the request ends.
func (h *Handler) formsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if r.MultipartForm != nil {
				r.MultipartForm.RemoveAll()
			}
		}()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		tooLarge := func() {
			w.Header().Set("Connection", "close")
			h.renderError(w, r, http.StatusRequestEntityTooLarge, "Form too large",
				fmt.Sprintf("Admin forms are at most %d KiB.", MaxFormBytes>>10))
		}
		ct := r.Header.Get("Content-Type")
		if ct != "" || r.ContentLength != 0 {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
				w.Header().Set("Connection", "close")
				h.renderError(w, r, http.StatusUnsupportedMediaType, "Unsupported form",
					"Admin forms are sent as application/x-www-form-urlencoded; nothing else is accepted.")
				return
			}
		}
		if r.ContentLength > MaxFormBytes {
			tooLarge()
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
		if err := r.ParseForm(); err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				tooLarge()
				return
			}
			h.renderError(w, r, http.StatusBadRequest, "Invalid form", "The form could not be read. Reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) parseTemplates() error {
	funcs := template.FuncMap{
		"fmtTime": func(t any) string {
			switch v := t.(type) {
			case time.Time:
				return v.UTC().Format("2006-01-02 15:04 UTC")
			case *time.Time:
				if v == nil {
					return ""
				}
				return v.UTC().Format("2006-01-02 15:04 UTC")
			}
			return ""
		},
	}
	h.pages = map[string]*template.Template{}
	for _, name := range []string{"login", "setup", "integrations", "created", "revoke", "usage", "error", "audit", "password", "workspace-usage", "roll", "review", "review-turn", "webhooks", "webhook-secret"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("parsing admin template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	return nil
}

// pageError is an error shown to a person as an HTML page.
type pageError struct {
	status         int
	title, message string
	retryAfter     time.Duration // sent as Retry-After when > 0
}

func (e *pageError) Error() string { return e.message }

var errNotFound = &pageError{status: http.StatusNotFound, title: "Not found", message: "There is no such page in the admin area."}

func ceilSeconds(d time.Duration) int { return max(1, int((d+time.Second-1)/time.Second)) }

// errBusy is the page of a login or setup refused because too many
// passwords are being checked at once.
var errBusy = &pageError{status: http.StatusServiceUnavailable, title: "Busy",
	message: "Too many logins are being checked right now. Try again in a moment.", retryAfter: time.Second}

// limitAttempts applies the per-address limit of the login and setup
// forms.
func (h *Handler) limitAttempts(r *http.Request) error {
	d, err := h.Attempts.Admit(r.Context(), addressKey(h.ClientIP(r)))
	if err != nil {
		// A limiter that cannot decide admits (fail open); the login
		// throttle and the hash limiter still apply.
		h.Logger.WarnContext(r.Context(), "login attempt limiter failed; admitting", "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	return &pageError{status: http.StatusTooManyRequests, title: "Too many attempts",
		message:    fmt.Sprintf("Too many login or setup attempts from your address. Try again in %d second(s).", ceilSeconds(d.RetryAfter)),
		retryAfter: d.RetryAfter}
}

// addressKey is the limit key of a client address: the address, or its /64
// for IPv6 (one subscriber usually holds a whole /64).
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() || a.Is4In6() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// page adapts a handler that returns an error: errors become HTML error
// pages (D1: the admin area shows pages, not problem documents).
func (h *Handler) page(fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		var pe *pageError
		switch {
		case errors.As(err, &pe):
			if pe.retryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(pe.retryAfter)))
			}
			h.renderError(w, r, pe.status, pe.title, pe.message)
		case assistant.ErrorCode(err) == assistant.ENotFound:
			h.renderError(w, r, http.StatusNotFound, "Not found", assistant.ErrorMessage(err))
		default:
			h.Logger.ErrorContext(r.Context(), "admin page failed", "path", r.URL.Path, "err", err)
			h.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "The page could not be shown. Try again in a moment.")
		}
	})
}

type sessionUser struct{ Email, Workspace string }

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data map[string]any) {
	v := map[string]any{"Title": title, "User": h.currentUser(r), "Nav": navFor(r)}
	if flash := h.session(r, func(ctx context.Context) string { return h.Sessions.PopString(ctx, sessFlash) }); flash != "" {
		v["Flash"] = flash
	}
	for k, val := range data {
		v[k] = val
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := h.pages[name].ExecuteTemplate(w, "layout", v); err != nil {
		h.Logger.Error("rendering admin page", "page", name, "err", err)
	}
}

// navItem is a link of the admin area's navigation; Current marks the
// page's own section (aria-current="page").
type navItem struct {
	Href, Label string
	Current     bool
}

// navFor lists the navigation, marking the section of r's path.
func navFor(r *http.Request) []navItem {
	items := []navItem{{"/admin/integrations", "API keys", false}, {"/admin/usage", "Usage", false},
		{"/admin/webhooks", "Webhooks", false}, {"/admin/audit", "Audit log", false}, {"/admin/review", "Review", false},
		{"/admin/password", "Password", false}, {"/admin/playground", "Playground", false}}
	if r == nil {
		return items
	}
	for i := range items {
		p := r.URL.Path
		items[i].Current = p == items[i].Href || strings.HasPrefix(p, items[i].Href+"/")
	}
	return items
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	h.render(w, r, status, "error", title, map[string]any{"Message": message})
}

func (h *Handler) currentUser(r *http.Request) *sessionUser {
	email := h.session(r, func(ctx context.Context) string { return h.Sessions.GetString(ctx, sessUserEmail) })
	if email == "" {
		return nil
	}
	return &sessionUser{Email: email, Workspace: h.Sessions.GetString(r.Context(), sessWorkspace)}
}

// session reads from the request's session, or returns "" where no session
// is loaded (the cross-origin refusal page is rendered before sessions).
func (h *Handler) session(r *http.Request, get func(context.Context) string) (value string) {
	if r == nil {
		return ""
	}
	defer func() {
		if recover() != nil {
			value = ""
		}
	}()
	return get(r.Context())
}

// requireUser sends people without a session to the login page.
func (h *Handler) requireUser(fn func(http.ResponseWriter, *http.Request, *sessionUser) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		u := h.currentUser(r)
		if u == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
				return nil
			}
			return &pageError{status: http.StatusUnauthorized, title: "Logged out", message: "Your session has ended. Log in again."}
		}
		return fn(w, r, u)
	}
}

func (h *Handler) audit(r *http.Request, workspace, actor, action, target, detail string) {
	e := assistant.AuditEvent{At: h.Now(), Workspace: workspace, Actor: actor, Action: action, Target: target, IP: h.ClientIP(r), Detail: detail}
	if err := h.Store.RecordAudit(context.WithoutCancel(r.Context()), e); err != nil {
		h.Logger.ErrorContext(r.Context(), "writing the audit log failed", "action", action, "err", err)
	}
}

// --- setup ---

func (h *Handler) setupForm(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	valid, err := h.setupValid(r.Context(), token)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "setup", "Set up", map[string]any{"Valid": valid, "Token": token, "MinPassword": access.MinPasswordLength})
	return nil
}

func (h *Handler) setupValid(ctx context.Context, token string) (bool, error) {
	if token == "" || len(token) > 200 {
		return false, nil
	}
	if n, err := h.Store.CountUsers(ctx); err != nil || n > 0 {
		return false, err
	}
	return h.Store.CheckSetupToken(ctx, access.HashSetupToken(token), h.Now())
}

func (h *Handler) setup(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if err := h.limitAttempts(r); err != nil {
		return err
	}
	token, email := r.PostFormValue("token"), strings.TrimSpace(r.PostFormValue("email"))
	password, confirm := r.PostFormValue("password"), r.PostFormValue("confirm")
	valid, err := h.setupValid(ctx, token)
	if err != nil {
		return err
	}
	again := func(msg string) error {
		h.render(w, r, http.StatusBadRequest, "setup", "Set up", map[string]any{
			"Valid": valid, "Token": token, "Email": email, "Error": msg, "MinPassword": access.MinPasswordLength})
		return nil
	}
	switch {
	case !valid:
		return again("")
	case !access.ValidEmail(email):
		return again("Enter a valid email address.")
	case password != confirm:
		return again("The two passwords differ.")
	}
	if err := access.CheckPasswordPolicy(password); err != nil {
		return again(assistant.ErrorMessage(err))
	}
	// Hash first: a busy server must not spend the one-time token.
	var hash string
	if err := h.Hashes.Do(ctx, func() { hash = access.HashPassword(password) }); err != nil {
		return errBusy // no slot in time, or the client left while waiting
	}
	if ok, err := h.Store.ConsumeSetupToken(ctx, access.HashSetupToken(token), h.Now()); err != nil || !ok {
		valid = false
		if err != nil {
			return err
		}
		return again("")
	}
	if err := h.Store.EnsureWorkspace(ctx, assistant.DefaultWorkspace); err != nil {
		return err
	}
	u, err := h.Store.CreateUser(ctx, assistant.User{Workspace: assistant.DefaultWorkspace, Email: email, PasswordHash: hash})
	if err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "user.created", u.Email, "first admin, through the setup link")
	if err := h.startSession(r, u); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessFlash, "Welcome. Your admin account is ready.")
	http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
	return nil
}

func (h *Handler) startSession(r *http.Request, u assistant.User) error {
	if err := h.Sessions.RenewToken(r.Context()); err != nil { // no session fixation
		return err
	}
	h.Sessions.Put(r.Context(), sessUserEmail, u.Email)
	h.Sessions.Put(r.Context(), sessWorkspace, u.Workspace)
	return nil
}

// --- login ---

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) error {
	if h.currentUser(r) != nil {
		http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
		return nil
	}
	h.render(w, r, http.StatusOK, "login", "Log in", nil)
	return nil
}

// dummyHash is checked for unknown emails so a login takes as long whether
// or not the account exists.
var dummyHash = access.HashPassword("not a real password, only for timing")

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if err := h.limitAttempts(r); err != nil {
		return err
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	ip := h.ClientIP(r)
	fail := func(status int, msg string) error {
		h.render(w, r, status, "login", "Log in", map[string]any{"Email": email, "Error": msg})
		return nil
	}
	if email == "" || password == "" {
		return fail(http.StatusBadRequest, "Enter your email and password.")
	}
	if len(email) > 254 {
		return fail(http.StatusUnauthorized, "The email or password is wrong.")
	}
	attempt, retry := h.Throttle.Begin(ctx, email, addressKey(ip))
	if attempt == nil {
		h.audit(r, "", email, "login.locked", email, "")
		minutes := int((retry + time.Minute - 1) / time.Minute)
		w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(retry)))
		return fail(http.StatusTooManyRequests, fmt.Sprintf(
			"Too many failed logins for this account from your address. Try again in %d minute(s).", minutes))
	}
	u, err := h.Store.UserByEmail(ctx, email)
	if err != nil && assistant.ErrorCode(err) != assistant.ENotFound {
		attempt.Cancel()
		return err
	}
	// An unknown email costs one hash too, so the time taken does not
	// reveal which accounts exist, and counts as a failure like any other.
	hash := dummyHash
	if err == nil {
		hash = u.PasswordHash
	}
	var match bool
	if herr := h.Hashes.Do(ctx, func() { match = access.CheckPassword(hash, password) }); herr != nil {
		attempt.Cancel()
		return errBusy // no slot in time, or the client left while waiting
	}
	if !match || err != nil {
		attempt.Fail()
		h.audit(r, u.Workspace, email, "login.failed", email, "")
		return fail(http.StatusUnauthorized, "The email or password is wrong.")
	}
	attempt.Succeed()
	if err := h.startSession(r, u); err != nil {
		return err
	}
	h.audit(r, u.Workspace, u.Email, "login.succeeded", u.Email, "")
	http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
	return nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	if u := h.currentUser(r); u != nil {
		h.audit(r, u.Workspace, u.Email, "logout", u.Email, "")
	}
	if err := h.Sessions.Destroy(r.Context()); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
	return nil
}

// --- keys ---

func (h *Handler) integrations(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	keys, err := h.Store.ListKeys(r.Context(), u.Workspace)
	if err != nil {
		return err
	}
	now := h.Now()
	type row struct {
		assistant.APIKey
		Status string
	}
	rows := make([]row, len(keys))
	for i, k := range keys {
		rows[i] = row{k, k.Status(now)}
	}
	h.render(w, r, http.StatusOK, "integrations", "API keys", map[string]any{"Keys": rows, "DefaultLimit": h.KeyRateLimit})
	return nil
}

// MaxKeyNameLength bounds a key's name.
const MaxKeyNameLength = 100

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || len(name) > MaxKeyNameLength {
		h.Sessions.Put(ctx, sessFlash, fmt.Sprintf("A key needs a name of 1 to %d characters.", MaxKeyNameLength))
		http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
		return nil
	}
	now := h.Now().UTC()
	plaintext, id, hash := access.NewKey()
	k := assistant.APIKey{ID: id, Workspace: u.Workspace, Name: name, Hash: hash, CreatedAt: now, CreatedBy: u.Email}
	if days := r.PostFormValue("expires"); days != "" {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3650 {
			return &pageError{status: http.StatusBadRequest, title: "Invalid expiry", message: "Choose an expiry from the list."}
		}
		exp := now.AddDate(0, 0, n)
		k.ExpiresAt = &exp
	}
	if limit := strings.TrimSpace(r.PostFormValue("limit")); limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || !assistant.ValidKeyRateLimit(n) {
			return &pageError{status: http.StatusBadRequest, title: "Invalid limit",
				message: fmt.Sprintf("A key's limit is a whole number of requests a minute, from 1 to %d; leave it empty for the default.", assistant.MaxKeyRateLimit)}
		}
		k.RateLimit = n
	}
	if err := h.Store.CreateKey(ctx, k); err != nil {
		return err
	}
	detail := name
	if k.RateLimit > 0 {
		detail = fmt.Sprintf("%s (limit %d a minute)", name, k.RateLimit)
	}
	h.audit(r, u.Workspace, u.Email, "key.created", id, detail)
	h.Keys.Forget(id) // drop any negative cache entry for the new id
	// The plaintext waits in the session for exactly one page view, sealed
	// with a key only this process holds: the session store (database,
	// WAL) never sees it in the clear.
	h.Sessions.Put(ctx, sessNewKey, h.seal(id, plaintext))
	h.Sessions.Put(ctx, sessNewKeyID, id)
	http.Redirect(w, r, "/admin/integrations/keys/"+id+"/created", http.StatusSeeOther)
	return nil
}

func (h *Handler) createdKey(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	id := r.PathValue("id")
	k, err := h.workspaceKey(ctx, u, id)
	if err != nil {
		return err
	}
	data := map[string]any{"KeyID": k.ID, "Name": k.Name}
	if h.Sessions.GetString(ctx, sessNewKeyID) == id {
		if plaintext, ok := h.unseal(id, h.Sessions.PopString(ctx, sessNewKey)); ok {
			data["Plaintext"] = plaintext
			data["Snippets"] = keySnippets(h.publicURL(r), plaintext)
		}
		h.Sessions.Remove(ctx, sessNewKeyID)
	}
	h.render(w, r, http.StatusOK, "created", "Key created", data)
	return nil
}

// seal encrypts a new key's plaintext for the session, bound to its id.
func (h *Handler) seal(id, plaintext string) string {
	nonce := make([]byte, h.sealer.NonceSize())
	rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(h.sealer.Seal(nonce, nonce, []byte(plaintext), []byte(id)))
}

// unseal reverses seal; it fails for anything sealed by another process
// (e.g. before a restart).
func (h *Handler) unseal(id, sealed string) (string, bool) {
	data, err := base64.RawStdEncoding.DecodeString(sealed)
	n := h.sealer.NonceSize()
	if err != nil || len(data) < n {
		return "", false
	}
	plain, err := h.sealer.Open(nil, data[:n], data[n:], []byte(id))
	if err != nil {
		return "", false
	}
	return string(plain), true
}

// workspaceKey returns a key of the user's own workspace; any other is
// "not found", so keys of other workspaces are not even confirmed to exist.
func (h *Handler) workspaceKey(ctx context.Context, u *sessionUser, id string) (assistant.APIKey, error) {
	if !access.ValidKeyID(id) {
		return assistant.APIKey{}, errNotFound
	}
	k, err := h.Store.KeyByID(ctx, id)
	if err != nil || k.Workspace != u.Workspace {
		if err == nil || assistant.ErrorCode(err) == assistant.ENotFound {
			return assistant.APIKey{}, &pageError{status: http.StatusNotFound, title: "Not found", message: "There is no such key in your workspace."}
		}
		return assistant.APIKey{}, err
	}
	return k, nil
}

func (h *Handler) revokeForm(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	k, err := h.workspaceKey(r.Context(), u, r.PathValue("id"))
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "revoke", "Revoke key", map[string]any{"Key": k})
	return nil
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	k, err := h.workspaceKey(ctx, u, r.PathValue("id"))
	if err != nil {
		return err
	}
	if _, err := h.Store.RevokeKey(ctx, u.Workspace, k.ID, h.Now().UTC()); err != nil {
		return err
	}
	h.Keys.Announce(ctx, k.ID)
	h.audit(r, u.Workspace, u.Email, "key.revoked", k.ID, k.Name)
	h.Sessions.Put(ctx, sessFlash, fmt.Sprintf("Key %s (%s) is revoked.", k.ID, k.Name))
	http.Redirect(w, r, "/admin/integrations", http.StatusSeeOther)
	return nil
}

// UsageWindow is how far back the usage page looks.
const UsageWindow = 30 * 24 * time.Hour

func (h *Handler) usage(w http.ResponseWriter, r *http.Request, u *sessionUser) error {
	ctx := r.Context()
	k, err := h.workspaceKey(ctx, u, r.PathValue("id"))
	if err != nil {
		return err
	}
	since := h.Now().UTC().Add(-UsageWindow).Truncate(24 * time.Hour)
	rows, err := h.Store.UsageByDay(ctx, u.Workspace, k.ID, since)
	if err != nil {
		return err
	}
	byStatus, classes := pivot(rows, func(d assistant.UsageDay) string { return d.StatusClass })
	bySource, sources := pivot(rows, func(d assistant.UsageDay) string { return d.Source })
	h.render(w, r, http.StatusOK, "usage", "Usage", map[string]any{
		"Key": k, "Since": since.Format("2006-01-02"),
		"Days": byStatus, "Classes": classes, "SourceDays": bySource, "Sources": sources,
	})
	return nil
}

type dayRow struct {
	Day    string
	Counts []int
	Total  int
}

// pivot turns (day, column, count) rows into one row per day with a count
// per column value, columns sorted.
func pivot(rows []assistant.UsageDay, column func(assistant.UsageDay) string) ([]dayRow, []string) {
	colSet := map[string]bool{}
	for _, d := range rows {
		colSet[column(d)] = true
	}
	cols := make([]string, 0, len(colSet))
	for c := range colSet {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	index := map[string]int{}
	for i, c := range cols {
		index[c] = i
	}
	var out []dayRow
	for _, d := range rows {
		if len(out) == 0 || out[len(out)-1].Day != d.Day {
			out = append(out, dayRow{Day: d.Day, Counts: make([]int, len(cols))})
		}
		last := &out[len(out)-1]
		last.Counts[index[column(d)]] += d.Requests
		last.Total += d.Requests
	}
	return out, cols
}

// securityHeaders: a CSP without inline script, no framing, no referrer
// (the setup link carries a token), and no caching of any admin page (a
// page may show a key).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// secureCookies marks cookies Secure when the request reached the service
// over https (OverHTTPS), so the session cookie is Secure behind TLS and
// still works on plain http://localhost.
func (h *Handler) secureCookies(next http.Handler) http.Handler {
	overHTTPS := h.OverHTTPS
	if overHTTPS == nil {
		overHTTPS = func(r *http.Request) bool { return r.TLS != nil }
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !overHTTPS(r) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&secureCookieWriter{ResponseWriter: w}, r)
	})
}

type secureCookieWriter struct {
	http.ResponseWriter
	done bool
}

func (w *secureCookieWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		cookies := w.Header()["Set-Cookie"]
		for i, c := range cookies {
			if !strings.Contains(strings.ToLower(c), "; secure") {
				cookies[i] = c + "; Secure"
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *secureCookieWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *secureCookieWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
