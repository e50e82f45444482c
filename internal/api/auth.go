package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/ratelimit"
)

// AuthFailuresPerMinute is how many failed authentications (401s) on
// /api/v1/ one client address (IPv6: one /64) may cause in a sliding
// minute; past it, its /api/v1/ requests get 429 until the count falls
// (docs/security.md). Failures never count against any key.
const AuthFailuresPerMinute = 30

// authFailureLimiter returns the server's limiter of failed
// authentication, or the default one.
func (s *Server) authFailureLimiter() assistant.TieredLimiter {
	if s.AuthFailures != nil {
		return s.AuthFailures
	}
	return ratelimit.NewTiered(0, AuthFailuresPerMinute, time.Minute, s.Now)
}

// KeyFrom returns the API key that authenticated the request.
func KeyFrom(ctx context.Context) (assistant.APIKey, bool) {
	k, ok := ctx.Value(keyCtxKey).(assistant.APIKey)
	return k, ok
}

// usage is the request's usage row in the making (D5), owned by
// authenticate for one authenticated request and handed down to the
// handler in the context. It is the one value handlers write to rather
// than read: they add what only they know (setMode, setSource,
// setEndpoint, failedWith) through its methods; a chat turn that succeeded hands over its
// citation events with recordTurn, which writes the row and the events in
// one transaction before the answer leaves, so that the leaderboard counts
// a turn once its answer is seen. Otherwise authenticate writes the row
// when the handler returns, with the response's status (or the status a
// streamed turn failed with, failedWith).
type usage struct {
	s        *Server
	key      assistant.APIKey
	start    time.Time
	endpoint string // the route pattern, or what setEndpoint names
	sw       *statusWriter

	mode, source string
	status       int  // overrides the response status; see failedWith
	written      bool // the row is stored
}

// usageFrom returns the request's usage row in the making, or nil when the
// request is not authenticated.
func usageFrom(ctx context.Context) *usage {
	u, _ := ctx.Value(usageCtxKey).(*usage)
	return u
}

func (u *usage) setMode(mode string) {
	if u != nil {
		u.mode = mode
	}
}

// setEndpoint names the endpoint more precisely than the route pattern
// (an MCP request records the method and tool it called).
func (u *usage) setEndpoint(endpoint string) {
	if u != nil {
		u.endpoint = endpoint
	}
}

func (u *usage) setSource(source string) {
	if u != nil {
		u.source = source
	}
}

// failedWith records the status of a streamed turn that failed after its
// 200 header had gone out: the problem's status, not the header's.
func (u *usage) failedWith(status int) {
	if u != nil {
		u.status = status
	}
}

func (u *usage) row(status int) assistant.UsageRecord {
	return assistant.UsageRecord{At: u.start, Workspace: u.key.Workspace, KeyID: u.key.ID, Endpoint: u.endpoint,
		Mode: u.mode, Source: u.source, Status: status, Latency: u.s.Now().Sub(u.start)}
}

// recordTurn writes the usage row of a chat turn answered 200 with its
// citation events, in one transaction (D5). On error nothing is stored and
// the caller answers with the error instead of the turn.
func (u *usage) recordTurn(ctx context.Context, citations []assistant.CitationEvent) error {
	if u == nil {
		return nil
	}
	if err := u.s.Access.RecordTurn(context.WithoutCancel(ctx), u.row(http.StatusOK), citations); err != nil {
		return fmt.Errorf("recording the turn: %w", err)
	}
	u.written = true
	return nil
}

// finish writes the row of a request whose handler did not (every request
// but a successful chat turn), with the response's status.
func (u *usage) finish(ctx context.Context) {
	if u.written {
		return
	}
	status := u.sw.status
	if status == 0 {
		status = http.StatusOK
	}
	if u.status != 0 {
		status = u.status
	}
	if err := u.s.Access.RecordUsage(context.WithoutCancel(ctx), u.row(status)); err != nil {
		u.s.Logger.ErrorContext(ctx, "recording usage failed", "request_id", RequestIDFrom(ctx), "err", err)
	}
}

// authenticator checks the bearer keys of the authenticated surfaces
// (/api/v1/, the OpenAI-compatible facade, /mcp). It is built once, so
// that every surface counts failed authentication in one limiter and
// shares one pacer (authpace.go); each surface mounts its middleware with
// its own error writer.
type authenticator struct {
	s        *Server
	failures assistant.TieredLimiter
	pacer    *authPacer
}

func (s *Server) newAuthenticator() *authenticator {
	penalty := authPenalty
	if s.authPenalty != 0 {
		penalty = s.authPenalty
	}
	return &authenticator{s: s, failures: s.authFailureLimiter(), pacer: newAuthPacer(s.Now, penalty)}
}

// middleware guards every route of the surface it is mounted on
// (interface.md section 5): a
// missing, malformed, unknown, revoked or expired bearer key is 401 (D1),
// checked before routing, so unknown paths do not reveal themselves to
// unauthenticated callers. The workspace comes from the key only. Each
// authenticated request gets one usage row (D5); failed authentication
// records none and counts against no key, only against the client's
// address (AuthFailuresPerMinute). Two Authorization headers are refused,
// not resolved by picking one. A preflight (OPTIONS) needs no key.
func (a *authenticator) middleware(writeErr errorWriter) func(http.Handler) http.Handler {
	s, failures, pacer := a.s, a.failures, a.pacer
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			// An address past the limit is slowed, not shut out: a valid key
			// is still served (authpace.go). A limiter that cannot decide
			// admits (fail open) and says so in the log.
			client := clientKey(ClientIP(r, s.TrustedProxies))
			limit, lerr := failures.Check(ctx, client)
			s.metrics.limit("auth_failures", limit, lerr)
			if lerr != nil {
				s.Logger.WarnContext(ctx, "authentication failure limiter failed; admitting", "err", lerr)
				limit = assistant.Decision{Allowed: true}
			}
			unauthorized := func(challenge string, p *Problem) {
				if !limit.Allowed {
					secs := max(1, ceilSeconds(limit.RetryAfter))
					writeErr(w, rateLimited(ctx, secs, fmt.Sprintf(
						"This client failed authentication more than %d times in the last minute. Retry after %d seconds with a valid API key.",
						failures.Policy().Hard, secs)))
					return
				}
				if _, err := failures.Admit(ctx, client); err != nil {
					s.Logger.WarnContext(ctx, "authentication failure limiter failed", "err", err)
				}
				w.Header().Set("WWW-Authenticate", challenge)
				writeErr(w, p)
			}
			values := r.Header.Values("Authorization")
			if len(values) > 1 {
				unauthorized(`Bearer realm="assistant", error="invalid_request"`, newProblem(ctx, http.StatusUnauthorized,
					"Send exactly one Authorization header."))
				return
			}
			plaintext, ok := bearerToken(r.Header.Get("Authorization"))
			if !ok {
				unauthorized(`Bearer realm="assistant"`, newProblem(ctx, http.StatusUnauthorized,
					"This endpoint needs an API key: send Authorization: Bearer sk_service_... (keys are created at /admin/integrations)."))
				return
			}
			var key assistant.APIKey
			var err error
			if limit.Allowed {
				key, err = s.Keys.Verify(ctx, plaintext)
			} else {
				key, err = pacer.verify(ctx, s.Keys, client, plaintext)
			}
			if err != nil {
				if assistant.ErrorCode(err) == assistant.EUnauthorized {
					unauthorized(`Bearer realm="assistant", error="invalid_token"`, problemFromError(ctx, s.Logger, err))
					return
				}
				writeErr(w, problemFromError(ctx, s.Logger, err))
				return
			}
			endpoint := routeFrom(ctx)
			if endpoint == "" {
				endpoint = r.Method + " " + r.URL.Path
			}
			nameCaller(w, key)
			sw := &statusWriter{ResponseWriter: w}
			u := &usage{s: s, key: key, start: s.Now(), sw: sw, endpoint: endpoint}
			ctx = context.WithValue(context.WithValue(ctx, keyCtxKey, key), usageCtxKey, u)
			next.ServeHTTP(sw, r.WithContext(ctx))
			u.finish(ctx)
		})
	}
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header (the scheme is case-insensitive).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// --- GET /api/v1/key ---

type keyOutput struct {
	Body struct {
		KeyID     string     `json:"key_id" doc:"The public id of the key (the 12 characters after sk_service_)."`
		Workspace string     `json:"workspace" doc:"The workspace the key belongs to."`
		Name      string     `json:"name"`
		CreatedAt time.Time  `json:"created_at"`
		ExpiresAt *time.Time `json:"expires_at" nullable:"true" doc:"When the key stops working, or null."`
	}
}

func (s *Server) currentKey(ctx context.Context, _ *struct{}) (*keyOutput, error) {
	key, ok := KeyFrom(ctx)
	if !ok {
		return nil, assistant.Errorf(assistant.EUnauthorized, "No API key was presented.")
	}
	out := &keyOutput{}
	out.Body.KeyID, out.Body.Workspace, out.Body.Name = key.ID, key.Workspace, key.Name
	out.Body.CreatedAt, out.Body.ExpiresAt = key.CreatedAt.UTC(), key.ExpiresAt
	return out, nil
}
